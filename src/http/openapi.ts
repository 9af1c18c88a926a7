/**
 * GET /svc/v1/openapi.json: an OpenAPI 3.1 document built from the same TypeBox schemas that
 * validate the requests, so the two cannot drift.
 */
import {
  CreatedKeySchema,
  CreateKeyBody,
  KeyListSchema,
  KeyRecordSchema,
  RevokeKeyBody,
} from '../governance/key-schemas.js';
import {
  CloseRunBody,
  CloseWorkUnitBody,
  CreateRunBody,
  CreateWorkUnitBody,
  ErrorBody,
  OutcomeRecord,
  ReportOutcomeBody,
  RunRecord,
  WorkUnitRecord,
  WorkUnitView,
} from '../governance/schemas.js';
import { CAPTURE_PATHS, CAPTURE_SCHEMAS } from './openapi-capture.js';
import { EVENT_PATHS, EVENT_SCHEMAS } from './openapi-events.js';
import { errors, idParameter, mergePaths, ref, schema } from './openapi-parts.js';
import { REPORT_PATHS, REPORT_SCHEMAS } from './openapi-reports.js';
import { REQUEST_LOG_PATHS, REQUEST_LOG_SCHEMAS } from './openapi-request-log.js';
import { WEBHOOK_PATHS, WEBHOOK_SCHEMAS } from './openapi-webhooks.js';

const API_VERSION = '0.8.4';

const idempotencyKey = {
  name: 'Idempotency-Key',
  in: 'header',
  required: true,
  description: '1-255 visible ASCII characters; scoped to (Project, Gateway Key); retained 24 h.',
  schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x21-\\x7e]+$' },
};

function write(
  summary: string,
  scope: string,
  body: string,
  response: string,
  extraErrors: number[],
  path = false,
) {
  return {
    summary,
    description: `Scope: ${scope}. First success 201; replay with the same key and body 200.`,
    parameters: path ? [idParameter, idempotencyKey] : [idempotencyKey],
    requestBody: { required: true, content: { 'application/json': { schema: ref(body) } } },
    responses: {
      '201': { description: 'Created', content: { 'application/json': { schema: ref(response) } } },
      '200': {
        description: 'Replayed or already in that state',
        content: { 'application/json': { schema: ref(response) } },
      },
      ...errors(400, 401, 403, 409, 429, 503, ...extraErrors),
    },
  };
}

function read(summary: string, response: string, scope = 'governance:read', path = true) {
  return {
    summary,
    description: `Scope: ${scope}.`,
    parameters: path ? [idParameter] : [],
    responses: {
      '200': { description: 'OK', content: { 'application/json': { schema: ref(response) } } },
      ...errors(401, 403, 404, 429, 503),
    },
  };
}

export function buildOpenApiDocument() {
  return {
    openapi: '3.1.0',
    info: {
      title: 'svc gateway governance API',
      version: API_VERSION,
      description:
        'Work Units, Runs and Outcomes. Experimental until a business pilot validates the boundary.',
    },
    servers: [{ url: '/' }],
    security: [{ gatewayKey: [] }],
    paths: mergePaths(
      {
        '/svc/v1/work-units': {
          post: write('Create a Work Unit', 'work_unit:create', 'CreateWorkUnitBody', 'WorkUnit', []),
        },
        '/svc/v1/work-units/{id}': {
          get: read('Read a Work Unit with its Runs and Outcomes', 'WorkUnitView'),
        },
        '/svc/v1/work-units/{id}/close': {
          post: write('Close a Work Unit', 'work_unit:create', 'CloseWorkUnitBody', 'WorkUnit', [404], true),
        },
        '/svc/v1/work-units/{id}/outcomes': {
          post: write(
            'Report an Outcome or a revision',
            'outcome:write',
            'ReportOutcomeBody',
            'Outcome',
            [404],
            true,
          ),
        },
        '/svc/v1/runs': { post: write('Create a Run', 'run:create', 'CreateRunBody', 'Run', [404]) },
        '/svc/v1/runs/{id}': { get: read('Read a Run', 'Run') },
        '/svc/v1/runs/{id}/close': {
          post: write('Close a Run', 'run:create', 'CloseRunBody', 'Run', [404], true),
        },
      },
      {
        '/svc/v1/keys': {
          post: {
            ...write(
              "Create a Gateway Key of the caller's Project",
              'keys:admin',
              'CreateKeyBody',
              'CreatedKey',
              [],
            ),
            description:
              'Scope: keys:admin. First success 201 with the secret (shown once); a replay with the same key and body answers 200 with secret null. `caps` bounds spend (lifetime, UTC day, UTC month); `inference_limits` bounds model calls per minute (requests, tokens: worst case at admission, corrected at settlement), shared by every replica; over it /v1 answers 429 rate_limited with Retry-After and rate-limit headers.',
          },
          get: read(
            "List the Gateway Keys of the caller's Project (never their secrets)",
            'KeyList',
            'keys:admin',
            false,
          ),
        },
        '/svc/v1/keys/{id}': { get: read('Read a Gateway Key', 'Key', 'keys:admin') },
        '/svc/v1/keys/{id}/revoke': {
          post: {
            ...write('Revoke a Gateway Key', 'keys:admin', 'RevokeKeyBody', 'Key', [404], true),
            description:
              'Scope: keys:admin. 201 when this call revoked the key, 200 when it already was. Takes effect at once on the replica that answered and within auth.key_cache_ms (default 2 s) on every other replica.',
          },
        },
      },
      REPORT_PATHS,
      REQUEST_LOG_PATHS,
      WEBHOOK_PATHS,
      EVENT_PATHS,
      CAPTURE_PATHS,
    ),
    components: {
      securitySchemes: {
        gatewayKey: { type: 'http', scheme: 'bearer', description: 'Authorization: Bearer gw_...' },
      },
      schemas: {
        CreateWorkUnitBody: schema(CreateWorkUnitBody),
        CloseWorkUnitBody: schema(CloseWorkUnitBody),
        CreateRunBody: schema(CreateRunBody),
        CloseRunBody: schema(CloseRunBody),
        ReportOutcomeBody: schema(ReportOutcomeBody),
        WorkUnit: schema(WorkUnitRecord),
        WorkUnitView: schema(WorkUnitView),
        Run: schema(RunRecord),
        Outcome: schema(OutcomeRecord),
        CreateKeyBody: schema(CreateKeyBody),
        RevokeKeyBody: schema(RevokeKeyBody),
        Key: schema(KeyRecordSchema),
        CreatedKey: schema(CreatedKeySchema),
        KeyList: schema(KeyListSchema),
        Error: schema(ErrorBody),
        ...REPORT_SCHEMAS,
        ...REQUEST_LOG_SCHEMAS,
        ...WEBHOOK_SCHEMAS,
        ...EVENT_SCHEMAS,
        ...CAPTURE_SCHEMAS,
      },
    },
  };
}
