/**
 * Environment overrides of configuration fields, applied to the parsed file before validation.
 *
 * Naming: `SVC_` + the field's path, segments upper-cased and joined by a double underscore:
 *   listen.port                 SVC_LISTEN__PORT=9000
 *   objects.s3.bucket           SVC_OBJECTS__S3__BUCKET=svc-objects
 *   connections[0].base_url     SVC_CONNECTIONS__0__BASE_URL=http://upstream:8080  (a number indexes an array)
 *   projects (a whole array)    SVC_PROJECTS='[{"id":"prj_a", ...}]'              (YAML/JSON flow text)
 * A value is read as a YAML scalar or flow collection (`9000` a number, `true` a boolean, `[a, b]`
 * an array, `{a: 1}` an object; quote a string that looks like a number: `'"0123"'`). An override
 * replaces the field (an object or array value replaces it whole). Only variables whose first
 * segment names a top-level field apply: SVC_CONFIG, SVC_DATABASE_URL and other secrets are not
 * configuration fields and are left alone. A bad value fails validation naming the variable.
 */
import { parse } from 'yaml';

const PREFIX = 'SVC_';

export interface AppliedOverride {
  variable: string;
  path: string;
}

function segmentsOf(variable: string): string[] {
  return variable
    .slice(PREFIX.length)
    .split('__')
    .map((segment) => segment.toLowerCase());
}

function parsedValue(text: string, variable: string): unknown {
  try {
    return parse(text);
  } catch (error) {
    throw new Error(`${variable}: not a YAML value (${(error as Error).message.split('\n')[0]})`);
  }
}

type Container = Record<string, unknown> | unknown[];

/** Applies every SVC_* override to `raw` in place; returns what was applied (for messages). */
export function applyEnvironmentOverrides(
  raw: Record<string, unknown>,
  environment: NodeJS.ProcessEnv,
  topLevelFields: readonly string[],
): AppliedOverride[] {
  const applied: AppliedOverride[] = [];
  const variables = Object.keys(environment)
    .filter((name) => name.startsWith(PREFIX) && environment[name] !== undefined)
    .sort();
  for (const variable of variables) {
    const segments = segmentsOf(variable);
    if (!topLevelFields.includes(segments[0]!) || segments.some((segment) => segment === '')) continue;
    let container: Container = raw;
    for (const [index, segment] of segments.entries()) {
      const last = index === segments.length - 1;
      const slot = Array.isArray(container) ? Number(segment) : segment;
      if (Array.isArray(container) && !Number.isInteger(slot))
        throw new Error(`${variable}: "${segment}" indexes an array, so it must be a number`);
      const holder = container as Record<string | number, unknown>;
      if (last) {
        holder[slot] = parsedValue(environment[variable]!, variable);
        break;
      }
      const next = holder[slot];
      if (next === undefined || next === null || typeof next !== 'object')
        holder[slot] = /^\d+$/.test(segments[index + 1]!) ? [] : {};
      container = holder[slot] as Container;
    }
    applied.push({ variable, path: `/${segments.join('/')}` });
  }
  return applied;
}
