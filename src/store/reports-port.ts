/**
 * The reports sub-port of the store (Store.reports): Project-scoped lists in a stable order with
 * keyset cursors, and the aggregates behind the spend and cost-per-Outcome reports. Sums are exact
 * integers (bigint, summed by the database as integers, never as floats). The use cases in
 * reports/ turn these rows into pages and report bodies.
 */
import type { Attributes, AuditEntry, Outcome, Run, WorkUnit } from './records.js';

/** Keyset position of a list ordered by (created_at DESC, id DESC). */
export interface CreatedPosition {
  createdAt: string;
  id: string;
}

export interface WorkUnitListQuery {
  projectId: string;
  status?: WorkUnit['status'];
  /** Inclusive lower and exclusive upper bound on created_at (RFC 3339). */
  createdFrom?: string;
  createdTo?: string;
  /** `metadata.<key>=<value>` filters, ANDed. */
  metadata?: Attributes;
  after?: CreatedPosition;
  limit: number;
}

export type RunStatusFilter = 'active' | 'closed' | 'expired';
export type BudgetStateFilter = 'available' | 'fully_reserved' | 'depleted';

export interface RunListQuery {
  projectId: string;
  workUnitId?: string;
  status?: RunStatusFilter;
  budgetState?: BudgetStateFilter;
  /** The clock, for the derived status (expired = active and expires_at <= now). */
  nowIso: string;
  /** `metadata.<key>=<value>` filters, ANDed (the Run's own metadata). */
  metadata?: Attributes;
  after?: CreatedPosition;
  limit: number;
}

export interface OutcomeListQuery {
  projectId: string;
  workUnitId?: string;
  definitionId?: string;
  /** The value as stored: its JSON text (`true`, `"happy"`). */
  valueJson?: string;
  provisional?: boolean;
  /** Only head revisions (not superseded). */
  headOnly?: boolean;
  /** Ordered by governance_sequence DESC: rows below this sequence. */
  beforeSequence?: number;
  limit: number;
}

/** Dimensions a spend report can be grouped by besides time. */
export const SPEND_DIMENSIONS = ['alias', 'connection', 'upstream_model', 'key_id'] as const;
export type SpendDimension = (typeof SPEND_DIMENSIONS)[number];
export type TimeBucket = 'hour' | 'day';

/** Where an attempt's attribute comes from: its call's tags or its Run's (and Work Unit's) metadata. */
export const ATTRIBUTE_KINDS = ['tag', 'metadata'] as const;
export type AttributeKind = (typeof ATTRIBUTE_KINDS)[number];

/** One attribute key a report groups by (`tag.team` = { kind: 'tag', name: 'team' }). */
export interface AttributeRef {
  kind: AttributeKind;
  name: string;
}

export interface SpendQuery {
  projectId: string;
  /** Whole UTC hours, RFC 3339; attempts reserved in [from, to). */
  fromIso: string;
  toIso: string;
  bucket: TimeBucket | null;
  dimensions: readonly SpendDimension[];
  /**
   * Groups by this attribute's value too: attempts without it form the group with value null.
   * Refusals carry no attributes: refusal rows always have the value null.
   */
  attribute?: AttributeRef | null;
}

export interface SpendGroupKey {
  /** Start of the hour or day (RFC 3339) when bucketed. */
  bucket?: string;
  /** The attribute's value when grouped by one; null for attempts without it. */
  attribute?: string | null;
  alias?: string;
  connection?: string;
  upstream_model?: string;
  key_id?: string;
}

/**
 * A group's figures: exact integers carried as JS numbers (the adapters refuse any count or sum at
 * or past 2^53, report-rows.ts `figure`, so a figure is never rounded).
 */
export interface SpendTotals {
  calls: number;
  inputTokens: number;
  outputTokens: number;
  cacheCreationInputTokens: number;
  cacheReadInputTokens: number;
  committedMicrosUsd: number;
  unknownAttempts: number;
  unknownMicrosUsd: number;
}

/** One row per group key, in key order (report-rows.ts `compareSpendKeys`). */
export interface SpendRow {
  key: SpendGroupKey;
  totals: SpendTotals;
}

/** One row per group key with refusals, in key order. */
export interface RefusalRow {
  key: SpendGroupKey;
  refusals: number;
}

/** A reservation that was not admitted (recorded by reports/refusal-recorder.ts). */
export interface RefusalRecord {
  projectId: string;
  keyId: string;
  runId: string | null;
  alias: string;
  /** Empty when the refusal happened before a target was chosen. */
  connection: string;
  upstreamModel: string;
  reason: string;
  createdAt: string;
}

export interface WorkUnitSpendQuery {
  projectId: string;
  definitionId: string;
  /** Work Units created in [from, to). */
  fromIso: string;
  toIso: string;
  /**
   * `metadata`: each Work Unit's row carries the value of this key of its metadata (null without).
   * `tag`: each Work Unit's spend is split by the value of this tag on its attempts: one row per
   * (Work Unit, value), the value null for its attempts without the tag, and one row with the value
   * null and spend 0 for a Work Unit with no attempts. Its rows' spends add up to the Work Unit's.
   */
  groupBy?: AttributeRef | null;
}

/** One Work Unit of a cost-per-Outcome period: its spend (all its Runs) and its head Outcome. */
export interface WorkUnitSpend {
  workUnitId: string;
  spendMicrosUsd: bigint;
  unknownAttempts: bigint;
  /** JSON text of the head revision's value; null without an Outcome for the definition. */
  headValueJson: string | null;
  headProvisional: boolean;
  /** With `groupBy`: the attribute value this row's spend belongs to (null: without it). */
  attribute?: string | null;
}

export interface ReportsRepository {
  listWorkUnits(query: WorkUnitListQuery): Promise<WorkUnit[]>;
  listRuns(query: RunListQuery): Promise<Run[]>;
  listOutcomes(query: OutcomeListQuery): Promise<Outcome[]>;
  /**
   * A Run's audit rows after `afterSequence`, oldest first. Run ids are unique across Projects: the
   * caller checks the Run belongs to its Project first (so the read follows the run index alone).
   */
  listAttempts(runId: string, afterSequence: number, limit: number): Promise<AuditEntry[]>;
  spend(query: SpendQuery): Promise<SpendRow[]>;
  refusals(query: SpendQuery): Promise<RefusalRow[]>;
  /**
   * Brings the rollups the spend and refusal reads use up to date (PostgreSQL folds the audit rows
   * and refusals settled since the last fold; SQLite's rollup is kept by triggers: nothing to do).
   * Run by a recurring sweep so a report seldom folds much itself.
   */
  fold(): Promise<void>;
  /** Appends refused reservations (a batch, in one write; an empty batch writes nothing). */
  recordRefusals(refusals: readonly RefusalRecord[]): Promise<void>;
  workUnitSpend(query: WorkUnitSpendQuery): Promise<WorkUnitSpend[]>;
}
