/**
 * Turns Ajv errors into one field-naming sentence. Union branches each leave errors; the most
 * specific one (deepest field; a non-type error over a type error) is the one a caller can act on.
 */
import type { ErrorObject } from 'ajv';

export interface SchemaViolation {
  /** Dotted path of the offending field, e.g. `messages.2.content.0.source.media_type`. */
  field: string;
  message: string;
  /** The violation is a member the schema does not know (additionalProperties). */
  unknownMember: boolean;
}

function join(prefix: string, pointer: string): string {
  if (pointer === '') return prefix;
  const tail = pointer.slice(1).replaceAll('/', '.').replaceAll('~1', '/').replaceAll('~0', '~');
  return prefix === '' ? tail : `${prefix}.${tail}`;
}

function child(path: string, member: string): string {
  return path === '' ? member : `${path}.${member}`;
}

interface Candidate {
  field: string;
  depth: number;
  error: ErrorObject;
}

function candidate(error: ErrorObject, prefix: string): Candidate | undefined {
  const path = join(prefix, error.instancePath);
  let field = path;
  switch (error.keyword) {
    case 'anyOf':
    case 'oneOf':
      return undefined;
    case 'additionalProperties':
      field = child(path, String((error.params as { additionalProperty: string }).additionalProperty));
      break;
    case 'required':
      field = child(path, String((error.params as { missingProperty: string }).missingProperty));
      break;
    case 'discriminator':
      field = child(path, String((error.params as { tag: string }).tag));
      break;
  }
  return { field, depth: field === '' ? 0 : field.split('.').length, error };
}

function discriminatorValues(error: ErrorObject): string[] {
  const branches = (
    error.parentSchema as { oneOf?: Array<{ properties?: Record<string, { const?: unknown }> }> }
  )?.oneOf;
  const tag = (error.params as { tag: string }).tag;
  return (branches ?? []).map((branch) => String(branch.properties?.[tag]?.const));
}

function sentence(best: Candidate, sameField: Candidate[]): string {
  const { error } = best;
  switch (error.keyword) {
    case 'additionalProperties':
      return 'unknown field';
    case 'required':
      return 'required';
    case 'enum':
      return `must be one of ${(error.params as { allowedValues: unknown[] }).allowedValues.map((v) => JSON.stringify(v)).join(', ')}`;
    case 'const':
      return `must be ${JSON.stringify((error.params as { allowedValue: unknown }).allowedValue)}`;
    case 'discriminator': {
      const params = error.params as { error: 'tag' | 'mapping'; tagValue: unknown };
      if (params.error === 'tag') return 'required (a string)';
      return `unknown value ${JSON.stringify(params.tagValue)}; must be one of ${discriminatorValues(error).join(', ')}`;
    }
    case 'type': {
      const types = sameField
        .filter((c) => c.error.keyword === 'type')
        .map((c) => String(c.error.params.type));
      return `must be ${[...new Set(types)].join(' or ')}`;
    }
    default:
      return error.message ?? 'invalid';
  }
}

/** The most useful violation among `errors`, its field prefixed by `prefix` (a dotted path, '' for the root). */
export function describeViolation(errors: readonly ErrorObject[], prefix: string): SchemaViolation {
  let best: Candidate | undefined;
  const candidates: Candidate[] = [];
  for (const error of errors) {
    const found = candidate(error, prefix);
    if (!found) continue;
    candidates.push(found);
    if (
      !best ||
      found.depth > best.depth ||
      (found.depth === best.depth && best.error.keyword === 'type' && found.error.keyword !== 'type')
    ) {
      best = found;
    }
  }
  if (!best) return { field: prefix || 'body', message: 'invalid', unknownMember: false };
  const sameField = candidates.filter((c) => c.field === best.field);
  const field = best.field || 'body';
  return {
    field,
    message: `${field}: ${sentence(best, sameField)}`,
    unknownMember: best.error.keyword === 'additionalProperties',
  };
}
