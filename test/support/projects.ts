/**
 * The two Projects (prj_a, prj_b) every test gateway serves, with the Outcome Definitions the tests
 * report against: odef_resolved (v1), odef_csat (v2) and odef_retired (disabled).
 */
export function testProjects(requestsPerSecond = 1000): Record<string, unknown>[] {
  const project = (id: string) => ({
    id,
    runs: {
      default_budget_micros_usd: 1_000_000,
      max_budget_micros_usd: 50_000_000,
      default_ttl_seconds: 3600,
      max_ttl_seconds: 86_400,
    },
    rate_limit: { requests_per_second: requestsPerSecond, burst: requestsPerSecond },
    outcome_definitions: [
      { id: 'odef_resolved', version: 1, kind: 'BOOLEAN', enabled: true },
      {
        id: 'odef_csat',
        version: 2,
        kind: 'CATEGORICAL',
        allowed_values: ['happy', 'neutral', 'unhappy'],
        enabled: true,
      },
      { id: 'odef_retired', version: 1, kind: 'BOOLEAN', enabled: false },
    ],
  });
  return [project('prj_a'), project('prj_b')];
}
