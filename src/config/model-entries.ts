/**
 * `models` entries are validated one by one against the schema their `endpoint` names (messages by
 * default), so a mistake is reported on its own path ("/models/2/targets/0/price: unknown field
 * ...") instead of as every branch of a union failing, and each entry's defaults are filled in.
 */
import { Ajv, type ValidateFunction } from 'ajv';
import { MODEL_ENDPOINTS, MODEL_SCHEMAS, type ModelEndpoint } from './schema.js';
import { schemaProblems } from './schema-problems.js';

const ajv = new Ajv({ allErrors: true, useDefaults: true, strict: false });
const validators = new Map<ModelEndpoint, ValidateFunction>(
  MODEL_ENDPOINTS.map((endpoint) => [endpoint, ajv.compile(MODEL_SCHEMAS[endpoint])]),
);

/** Problems of every entry of a raw `models` value (an absent or non-array value is the schema's to report). */
export function modelEntryProblems(models: unknown): string[] {
  if (!Array.isArray(models)) return [];
  return models.flatMap((entry, index) => {
    const at = `/models/${index}`;
    if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) return [`${at}: must be object`];
    const endpoint = (entry as { endpoint?: unknown }).endpoint ?? 'messages';
    const validate = validators.get(endpoint as ModelEndpoint);
    if (typeof endpoint !== 'string' || validate === undefined) {
      return [
        `${at}/endpoint: unknown endpoint ${JSON.stringify(endpoint)} (one of ${MODEL_ENDPOINTS.join(', ')})`,
      ];
    }
    return validate(entry) ? [] : schemaProblems(validate.errors ?? [], at);
  });
}
