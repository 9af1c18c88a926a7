/**
 * The records the store port and its sub-ports share (port.ts re-exports them): keys, Work Units,
 * Runs, Outcomes, idempotent writes, attempts and their audit entries. Types only; a sub-port
 * imports these, never port.ts, so the port and its sub-ports import one way.
 */
import type { InferenceLimits } from '../limits/inference-limits.js';
import type { AttemptUsage, SettlementOutcome } from '../money/settlement.js';
import type { SpendCaps } from '../money/spend-caps.js';

export type KeyLimits = SpendCaps & InferenceLimits;

export interface KeyRecord {
  id: string;
  projectId: string;
  scopes: string[];
  label: string | null;
  createdAt: string;
  revokedAt: string | null;
  /** Keys created over the API may expire; null = never. */
  expiresAt: string | null;
  /** Model aliases the key may use; null = every alias. */
  models: string[] | null;
  limits: KeyLimits;
}

export interface NewKey {
  id: string;
  projectId: string;
  secretHash: string;
  scopes: string[];
  label: string | null;
  createdAt: string;
}

export type DefinitionKind = 'BOOLEAN' | 'CATEGORICAL';

export interface OutcomeDefinition {
  projectId: string;
  id: string;
  version: number;
  kind: DefinitionKind;
  allowedValues: Array<string | boolean>;
  enabled: boolean;
}

export interface FrozenDefinition {
  id: string;
  version: number;
}

/**
 * String attributes for attribution (docs/request-log.md, governance/attributes.ts holds the
 * limits): a Work Unit's or Run's `metadata`, a model call's tags.
 */
export type Attributes = Record<string, string>;

export interface WorkUnit {
  id: string;
  projectId: string;
  status: 'open' | 'closed';
  createdAt: string;
  closedAt: string | null;
  definitions: FrozenDefinition[];
  /** Set at creation; absent or null: none given. */
  metadata?: Attributes | null;
}

export interface Run {
  id: string;
  projectId: string;
  workUnitId: string;
  budgetMicrosUsd: number;
  committedMicrosUsd: number;
  reservedMicrosUsd: number;
  /** Cost committed above the reservations that covered it (should stay 0; see ledger/). */
  overrunMicrosUsd: number;
  unknownAttempts: number;
  /** Stored status; 'expired' is derived from expiresAt at read time (governance/run-view.ts). */
  status: 'active' | 'closed';
  createdAt: string;
  expiresAt: string;
  closedAt: string | null;
  closeReason: string | null;
  /** Set at creation; absent or null: none given. Overlays its Work Unit's on the audit rows. */
  metadata?: Attributes | null;
}

export interface Outcome {
  id: string;
  projectId: string;
  workUnitId: string;
  definitionId: string;
  definitionVersion: number;
  value: string | boolean;
  reporterKeyId: string;
  observedAt: string;
  ingestedAt: string;
  revision: number;
  governanceSequence: number;
  provisional: boolean;
  evidenceRef: string | null;
  evidenceSha256: string | null;
  supersedesOutcomeId: string | null;
}

/** Identifies one idempotent governance write: scope (Project, key id, key) and request fingerprint. */
export interface Idempotency {
  projectId: string;
  keyId: string;
  key: string;
  /** SHA-256 of method, route and canonical JSON body. */
  fingerprint: string;
  createdAt: string;
  expiresAt: string;
}

/**
 * Outcome of an idempotent write: 201 on first success, 200 on a replay of the stored body or when
 * the write found the state already reached (closing a closed resource with a new key).
 */
export interface IdempotentResult {
  status: 200 | 201;
  replayed: boolean;
  body: unknown;
}

/** Builds the response body from the record inside the write transaction, so replays are exact. */
export type Render<T> = (record: T) => unknown;

export type AttemptState = 'reserved' | 'settled' | 'unknown' | 'released';

/** Who made an attempt and where it went: stored with it at reservation, copied to its audit entry. */
export interface AttemptIdentity {
  projectId: string;
  keyId: string;
  runId: string | null;
  endpoint: string;
  alias: string;
  connection: string;
  profile: string;
  upstreamModel: string;
}

/** A target routing tried before an attempt, and how that try ended. */
export interface RouteTried {
  attempt_id: string;
  connection: string;
  outcome: string;
  /** The failure as the runner names it (`http_503`, `timeout`, ...) or the client error's code. */
  error: string;
}

/** A target routing skipped before any attempt, with its reason code and details. */
export interface RouteSkipped {
  connection: string;
  code: string;
  reasons: string[];
}

/** Where an attempt sits in its call's route (stored as JSON; snake_case as the API shows it). */
export interface AttemptRoute {
  /** This attempt's position among the call's attempts (0: the first). */
  index: number;
  tried: RouteTried[];
  skipped: RouteSkipped[];
}

/**
 * What the log tells about an attempt beyond its identity: the client request it served (call_id,
 * shared by every attempt of that request), the request's tags, its route and trace. Stored on
 * the attempt at reservation and copied to its audit entry at settlement.
 */
export interface AttemptAttribution {
  callId: string | null;
  tags: Attributes | null;
  route: AttemptRoute | null;
  traceId: string | null;
}

export interface AuditEntry extends AttemptIdentity {
  sequence: number;
  attemptId: string;
  state: AttemptState;
  reservationMicrosUsd: number;
  costMicrosUsd: number;
  usage: AttemptUsage | null;
  outcome: SettlementOutcome;
  httpStatus: number | null;
  durationMs: number;
  /** True when the actual cost priced above the reservation (a bug in the worst-case bound). */
  overran: boolean;
  createdAt: string;
  settledAt: string;
  /** Migration 11's columns (null on rows written before it). */
  workUnitId?: string | null;
  tags?: Attributes | null;
  metadata?: Attributes | null;
  route?: AttemptRoute | null;
  callId?: string | null;
  firstByteMs?: number | null;
  upstreamRequestId?: string | null;
  traceId?: string | null;
}
