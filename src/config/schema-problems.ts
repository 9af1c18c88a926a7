/** Ajv errors -> `path: problem` lines, the form every configuration problem is reported in. */
import type { ErrorObject } from 'ajv';

export function schemaProblems(errors: readonly ErrorObject[], prefix = ''): string[] {
  const lines = errors.map((error) => {
    const detail =
      error.keyword === 'additionalProperties'
        ? `unknown field "${String((error.params as { additionalProperty: string }).additionalProperty)}"`
        : error.keyword === 'enum' || error.keyword === 'const'
          ? `${error.message} (${JSON.stringify(error.params)})`
          : (error.message ?? 'invalid');
    return `${prefix}${error.instancePath}${prefix || error.instancePath ? '' : '/'}: ${detail}`;
  });
  return [...new Set(lines)];
}
