/**
 * Governance use cases: Work Units, Runs and Outcomes. Each write validates its input, derives ids,
 * times and defaults, then calls one store operation (one transaction, idempotency included).
 * Reads derive Run status from the clock. Nothing here builds HTTP responses or error bodies.
 */
import type { Static } from '@sinclair/typebox';
import type { Config, ProjectConfig } from '../config/schema.js';
import { GatewayError } from '../errors/gateway-error.js';
import { type Clock, parseRfc3339 } from '../lib/clock.js';
import { newId } from '../lib/ids.js';
import type { RequestRecord } from '../observability/request-scope.js';
import type {
  Attributes,
  FrozenDefinition,
  IdempotentResult,
  OutcomeDefinition,
  Store,
} from '../store/port.js';
import { checkMetadata } from './attributes.js';
import { evidenceRefProblem } from './evidence.js';
import { idempotencyOfWrite } from './idempotency.js';
import {
  CloseRunBody,
  CloseWorkUnitBody,
  CreateRunBody,
  CreateWorkUnitBody,
  ReportOutcomeBody,
} from './schemas.js';
import { validateBody } from './validate.js';
import { outcomeBody, runBody, workUnitBody, workUnitViewBody } from './views.js';

export const MAX_RUNS_PER_WORK_UNIT = 32;
export const MAX_REVISIONS = 20;
export const OUTCOME_WRITE_WINDOW_MS = 30 * 86_400_000;

/** Who is calling: the authenticated Gateway Key. */
export interface Caller {
  keyId: string;
  projectId: string;
  scopes: readonly string[];
  /** Model aliases the key may use; null or absent = every alias (governance/scopes.ts requireModel). */
  models?: readonly string[] | null;
  /**
   * The record of the client request this caller made (observability/request-scope.ts): handed to
   * every attempt the request makes, for its log line and its rate-limit state. Absent for
   * background work.
   */
  request?: RequestRecord | undefined;
}

/** A governance write as the HTTP layer hands it over. */
export interface WriteRequest {
  caller: Caller;
  idempotencyKey: string;
  method: string;
  path: string;
  body: unknown;
}

export interface GovernanceDeps {
  store: Store;
  clock: Clock;
  config: Config;
  /** In-process reservations not yet durable, per Run (the ledger provides it; 0 without one). */
  pendingFor?: (runId: string) => number;
}

/** A create body's `metadata`, checked with the attribute limits before the schema (clearer errors). */
function metadataOf(body: unknown): Attributes | undefined {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return undefined;
  return checkMetadata((body as { metadata?: unknown }).metadata);
}

export class GovernanceService {
  private readonly projects: ReadonlyMap<string, ProjectConfig>;
  private readonly pendingFor: (runId: string) => number;

  constructor(private readonly deps: GovernanceDeps) {
    this.projects = new Map(deps.config.projects.map((project) => [project.id, project]));
    this.pendingFor = deps.pendingFor ?? (() => 0);
  }

  project(projectId: string): ProjectConfig {
    const project = this.projects.get(projectId);
    if (!project)
      throw new GatewayError('authentication_failed', 'The Gateway Key belongs to no configured Project.');
    return project;
  }

  private idempotency(request: WriteRequest) {
    return idempotencyOfWrite(request, this.deps.clock.now(), this.deps.config.idempotency.retention_hours);
  }

  private now(): string {
    return new Date(this.deps.clock.now()).toISOString();
  }

  async createWorkUnit(request: WriteRequest): Promise<IdempotentResult> {
    const metadata = metadataOf(request.body);
    const body = validateBody(CreateWorkUnitBody, request.body);
    const definitions = this.freezeDefinitions(request.caller.projectId, body.outcome_definition_ids);
    const createdAt = this.now();
    return this.deps.store.createWorkUnit(
      {
        workUnit: {
          id: newId('wku'),
          projectId: request.caller.projectId,
          status: 'open',
          createdAt,
          closedAt: null,
          definitions,
          metadata: metadata ?? null,
        },
      },
      this.idempotency(request),
      workUnitBody,
    );
  }

  /** Definitions named must be enabled in the caller's Project; none named freezes every enabled one. */
  private freezeDefinitions(projectId: string, ids: string[] | undefined): FrozenDefinition[] {
    const enabled = this.project(projectId).outcome_definitions.filter((definition) => definition.enabled);
    if (ids === undefined)
      return enabled.map((definition) => ({ id: definition.id, version: definition.version }));
    return ids.map((id, index) => {
      const definition = enabled.find((candidate) => candidate.id === id);
      if (!definition) {
        throw new GatewayError(
          'invalid_request',
          `outcome_definition_ids.${index}: ${id} is not an enabled Outcome Definition of this Project`,
          { param: `outcome_definition_ids.${index}` },
        );
      }
      return { id: definition.id, version: definition.version };
    });
  }

  async closeWorkUnit(request: WriteRequest, workUnitId: string): Promise<IdempotentResult> {
    validateBody(CloseWorkUnitBody, request.body);
    return this.deps.store.closeWorkUnit(
      { projectId: request.caller.projectId, id: workUnitId, closedAt: this.now() },
      this.idempotency(request),
      workUnitBody,
    );
  }

  async createRun(request: WriteRequest): Promise<IdempotentResult> {
    const metadata = metadataOf(request.body);
    const body = validateBody(CreateRunBody, request.body);
    const limits = this.project(request.caller.projectId).runs;
    const budget = chooseWithinCeiling(
      'budget_micros_usd',
      body.budget_micros_usd,
      limits.default_budget_micros_usd,
      limits.max_budget_micros_usd,
    );
    const ttlSeconds = chooseWithinCeiling(
      'ttl_seconds',
      body.ttl_seconds,
      limits.default_ttl_seconds,
      limits.max_ttl_seconds,
    );
    const nowMs = this.deps.clock.now();
    return this.deps.store.createRun(
      {
        run: {
          id: newId('run'),
          projectId: request.caller.projectId,
          workUnitId: body.work_unit_id,
          budgetMicrosUsd: budget,
          committedMicrosUsd: 0,
          reservedMicrosUsd: 0,
          overrunMicrosUsd: 0,
          unknownAttempts: 0,
          status: 'active',
          createdAt: new Date(nowMs).toISOString(),
          expiresAt: new Date(nowMs + ttlSeconds * 1000).toISOString(),
          closedAt: null,
          closeReason: null,
          metadata: metadata ?? null,
        },
        maxRunsPerWorkUnit: MAX_RUNS_PER_WORK_UNIT,
      },
      this.idempotency(request),
      (run) => runBody(run, nowMs),
    );
  }

  async closeRun(request: WriteRequest, runId: string): Promise<IdempotentResult> {
    const body = validateBody(CloseRunBody, request.body);
    const nowMs = this.deps.clock.now();
    return this.deps.store.closeRun(
      {
        projectId: request.caller.projectId,
        id: runId,
        reason: body.reason ?? 'completed',
        closedAt: new Date(nowMs).toISOString(),
      },
      this.idempotency(request),
      (run) => runBody(run, nowMs, this.pendingFor(run.id)),
    );
  }

  async reportOutcome(request: WriteRequest, workUnitId: string): Promise<IdempotentResult> {
    const body = validateBody(ReportOutcomeBody, request.body, 'invalid_outcome');
    const observedMs = parseRfc3339(body.observed_at);
    if (observedMs === undefined) {
      throw new GatewayError('invalid_outcome', 'observed_at: must be an RFC 3339 date-time', {
        param: 'observed_at',
      });
    }
    if (body.evidence_ref !== undefined) {
      const problem = evidenceRefProblem(body.evidence_ref);
      if (problem) throw new GatewayError('invalid_outcome', problem, { param: 'evidence_ref' });
    }
    const projectId = request.caller.projectId;
    const versions = await this.deps.store.listDefinitions(projectId);
    return this.deps.store.reportOutcome(
      {
        outcome: {
          id: newId('out'),
          projectId,
          workUnitId,
          definitionId: body.definition_id,
          value: body.value,
          reporterKeyId: request.caller.keyId,
          observedAt: new Date(observedMs).toISOString(),
          ingestedAt: this.now(),
          evidenceRef: body.evidence_ref ?? null,
          evidenceSha256: body.evidence_sha256 ?? null,
          supersedesOutcomeId: body.supersedes_outcome_id ?? null,
        },
        maxRevisions: MAX_REVISIONS,
        writeWindowMs: OUTCOME_WRITE_WINDOW_MS,
        checkDefinition: (frozen) => checkOutcomeValue(frozen, versions, body),
      },
      this.idempotency(request),
      outcomeBody,
    );
  }

  async getWorkUnit(caller: Caller, id: string) {
    const view = await this.deps.store.getWorkUnit(caller.projectId, id);
    if (!view) throw new GatewayError('work_unit_not_found', 'Work Unit not found.');
    return workUnitViewBody(view, this.deps.clock.now(), this.pendingFor);
  }

  async getRun(caller: Caller, id: string) {
    const run = await this.deps.store.getRun(caller.projectId, id);
    if (!run) throw new GatewayError('run_not_found', 'Run not found.');
    return runBody(run, this.deps.clock.now(), this.pendingFor(run.id));
  }
}

/** Omitted or zero takes the Project default; an explicit value above the ceiling is refused. */
function chooseWithinCeiling(
  field: string,
  value: number | undefined,
  fallback: number,
  ceiling: number,
): number {
  if (value === undefined || value === 0) return fallback;
  if (value > ceiling) {
    throw new GatewayError(
      'invalid_request',
      `${field}: ${value} exceeds the Project ceiling of ${ceiling}`,
      { param: field },
    );
  }
  return value;
}

/** Checks the value against the definition frozen on the Work Unit; returns the frozen version. */
function checkOutcomeValue(
  frozen: FrozenDefinition | undefined,
  versions: OutcomeDefinition[],
  body: Static<typeof ReportOutcomeBody>,
): number {
  if (!frozen) {
    throw new GatewayError(
      'invalid_outcome',
      `definition_id: ${body.definition_id} is not frozen on this Work Unit`,
      {
        param: 'definition_id',
      },
    );
  }
  const definition = versions.find(
    (candidate) => candidate.id === frozen.id && candidate.version === frozen.version,
  );
  if (!definition) {
    throw new GatewayError(
      'invalid_outcome',
      `definition_id: version ${frozen.version} of ${frozen.id} is unknown`,
      {
        param: 'definition_id',
      },
    );
  }
  const allowed =
    definition.kind === 'BOOLEAN'
      ? typeof body.value === 'boolean'
      : definition.allowedValues.includes(body.value);
  if (!allowed) {
    const expected =
      definition.kind === 'BOOLEAN'
        ? 'true or false'
        : `one of ${definition.allowedValues.map((value) => JSON.stringify(value)).join(', ')}`;
    throw new GatewayError(
      'invalid_outcome',
      `value: must be ${expected} for ${definition.id} (${definition.kind})`,
      { param: 'value' },
    );
  }
  return frozen.version;
}
