/**
 * Budget and cap thresholds (docs/events.md): fractions of a limit at which an event fires once.
 * Pure, shared by both store adapters (and mirrored by the PostgreSQL reservation function of
 * migration 12): a threshold t is crossed by a change of committed + reserved from `before` to
 * `after` when before < t x limit <= after. Only growth crosses, so a reservation crosses and a
 * settlement (which gives back at least what it commits, unless it overran) does not.
 */

/** The fractions configured for one Project (ascending, each in (0, 1]); empty: no threshold event. */
export interface EventThresholds {
  run: readonly number[];
  caps: readonly number[];
}

export const NO_THRESHOLDS: EventThresholds = { run: [], caps: [] };

/** The thresholds crossed by going from `before` to `after` against `limit` (none when it does not grow). */
export function thresholdsCrossed(
  thresholds: readonly number[],
  limit: number,
  before: number,
  after: number,
): number[] {
  if (after <= before) return [];
  const crossed: number[] = [];
  for (const threshold of thresholds) {
    const level = threshold * limit;
    if (before < level && level <= after) crossed.push(threshold);
  }
  return crossed;
}

/** A cap counter's period as an event names its window: `lifetime`, `day:2026-11-28`, `month:2026-11`. */
export function windowOfPeriod(period: string): string {
  if (period === 'lifetime') return 'lifetime';
  return period.length === 10 ? `day:${period}` : `month:${period}`;
}

/** The thresholds as one sorted list without repeats (configuration order does not matter). */
export function normalizedThresholds(values: readonly number[] | undefined): number[] {
  return [...new Set(values ?? [])].sort((left, right) => left - right);
}

/** Threshold lists as configuration spells them (top level `events`, optionally per Project). */
export interface ThresholdFields {
  run_budget_thresholds?: number[];
  cap_thresholds?: number[];
}

/**
 * Each Project's thresholds: its own lists where it sets them, else the top-level ones. What the
 * ledger passes with each reservation (ReserveInput.eventThresholds).
 */
export function eventThresholdsFrom(
  defaults: ThresholdFields,
  projects: ReadonlyArray<{ id: string; events?: ThresholdFields }>,
): (projectId: string) => EventThresholds {
  const of = (fields: ThresholdFields | undefined): EventThresholds => ({
    run: normalizedThresholds(fields?.run_budget_thresholds ?? defaults.run_budget_thresholds),
    caps: normalizedThresholds(fields?.cap_thresholds ?? defaults.cap_thresholds),
  });
  const fallback = of(undefined);
  const byProject = new Map(projects.map((project) => [project.id, of(project.events)]));
  return (projectId) => byProject.get(projectId) ?? fallback;
}
