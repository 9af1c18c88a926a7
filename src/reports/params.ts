/**
 * Query-string parameters of the lists and reports, validated strictly: an unknown parameter, a
 * repeated one or a bad value is a 400 invalid_request whose message names the parameter.
 */
import { GatewayError } from '../errors/gateway-error.js';
import { isoTime, parseRfc3339 } from '../lib/clock.js';

export type Query = Record<string, string | string[] | undefined>;

/** Page size: default and documented maximum of every list. */
export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 200;

export function badParameter(name: string, problem: string): GatewayError {
  return new GatewayError('invalid_request', `Query parameter ${name}: ${problem}`);
}

export class Params {
  /** `prefixes`: families of parameters allowed besides `allowed` (`metadata.` for `metadata.<key>`). */
  constructor(
    private readonly query: Query,
    allowed: readonly string[],
    prefixes: readonly string[] = [],
  ) {
    for (const name of Object.keys(query)) {
      if (!allowed.includes(name) && !prefixes.some((prefix) => name.startsWith(prefix))) {
        const families = prefixes.map((prefix) => `${prefix}<key>`);
        throw badParameter(name, `unknown parameter (allowed: ${[...allowed, ...families].join(', ')}).`);
      }
    }
  }

  text(name: string): string | undefined {
    const value = this.query[name];
    if (Array.isArray(value)) throw badParameter(name, 'given more than once.');
    if (value === undefined) return undefined;
    if (value.length === 0 || value.length > 256) throw badParameter(name, 'must be 1-256 characters.');
    return value;
  }

  oneOf<T extends string>(name: string, values: readonly T[]): T | undefined {
    const value = this.text(name);
    if (value === undefined) return undefined;
    if (!(values as readonly string[]).includes(value)) {
      throw badParameter(name, `must be one of ${values.join(', ')}.`);
    }
    return value as T;
  }

  flag(name: string): boolean | undefined {
    const value = this.oneOf(name, ['true', 'false'] as const);
    return value === undefined ? undefined : value === 'true';
  }

  /** An RFC 3339 time, returned normalised to UTC with milliseconds. */
  time(name: string): string | undefined {
    const value = this.text(name);
    if (value === undefined) return undefined;
    const ms = parseRfc3339(value);
    if (ms === undefined)
      throw badParameter(name, 'must be an RFC 3339 date-time, e.g. 2026-11-01T00:00:00Z.');
    return isoTime(ms);
  }

  limit(): number {
    const value = this.text('limit');
    if (value === undefined) return DEFAULT_PAGE_SIZE;
    if (!/^\d+$/.test(value) || Number(value) < 1 || Number(value) > MAX_PAGE_SIZE) {
      throw badParameter('limit', `must be an integer from 1 to ${MAX_PAGE_SIZE}.`);
    }
    return Number(value);
  }
}
