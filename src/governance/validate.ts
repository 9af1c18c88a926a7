/** Validates a parsed JSON body against a schema; the error names the offending field. */
import type { Static, TSchema } from '@sinclair/typebox';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import type { ErrorCode } from '../errors/catalogue.js';
import { GatewayError } from '../errors/gateway-error.js';

const ajv = new Ajv({ allErrors: false, strict: false, coerceTypes: false, useDefaults: false });
addFormats.default(ajv);
const compiled = new WeakMap<TSchema, ValidateFunction>();

function describe(error: ErrorObject): { field: string; message: string } {
  const path = error.instancePath.replace(/^\//, '').replaceAll('/', '.');
  if (error.keyword === 'additionalProperties') {
    const extra = String((error.params as { additionalProperty: string }).additionalProperty);
    const field = path ? `${path}.${extra}` : extra;
    return { field, message: `${field}: unknown field` };
  }
  if (error.keyword === 'required') {
    const missing = String((error.params as { missingProperty: string }).missingProperty);
    const field = path ? `${path}.${missing}` : missing;
    return { field, message: `${field}: required` };
  }
  const field = path || 'body';
  return { field, message: `${field}: ${error.message ?? 'invalid'}` };
}

export function validateBody<S extends TSchema>(
  schema: S,
  body: unknown,
  code: ErrorCode = 'invalid_request',
): Static<S> {
  let validate = compiled.get(schema);
  if (!validate) {
    validate = ajv.compile(schema);
    compiled.set(schema, validate);
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new GatewayError(code, 'The request body must be a JSON object.');
  }
  if (!validate(body)) {
    const { field, message } = describe(validate.errors![0]!);
    throw new GatewayError(code, message, { param: field });
  }
  return body as Static<S>;
}
