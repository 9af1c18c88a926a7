/** Exhaustiveness check for switches over unions: a new member fails to compile. */
export function assertNever(value: never, what = 'value'): never {
  throw new Error(`unexpected ${what}: ${JSON.stringify(value)}`);
}
