import { defineConfig } from 'vitest/config';

// Under CI a JSON report is written too, so .ci/run can print the final "N passed, N failed" line.
const reporters = process.env.CI === 'true' ? ['default', ['json', { outputFile: '.vitest-report.json' }]] : ['default'];

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    poolOptions: { forks: { maxForks: 2, minForks: 1 } },
    reporters: reporters as never,
  },
});
