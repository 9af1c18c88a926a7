/**
 * What a batch result line says, whatever the wire's batch JSONL looks like (each wire's
 * batch-lines.ts reads its own format into this).
 */
export interface LineResult {
  customId: string;
  kind: 'succeeded' | 'errored' | 'canceled' | 'expired';
  /** Succeeded: the upstream wire answer; errored: the upstream error body. */
  body?: unknown;
  statusCode?: number;
}

export const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** The parsed lines of a JSONL text; an unparsable line is undefined (skipped by the readers). */
export function jsonLines(text: string): unknown[] {
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => {
      try {
        return JSON.parse(line) as unknown;
      } catch {
        return undefined;
      }
    });
}
