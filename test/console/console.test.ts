/**
 * The web console in a real browser (Debian's Chromium driven by playwright-core) against a real
 * gateway with known traffic: a wrong key's message, sign-in, the overview's totals equal to the
 * ledger's (read from the page), a Work Unit with its Runs and attempts, and the cost-per-Outcome
 * definition switcher. Screenshots go to test-output/console/ (git-ignored).
 * Without /usr/bin/chromium the suite is skipped (apt-get install chromium), except under CI=true.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditOf } from '../reports/recompute.js';
import { driveTraffic, type Traffic } from '../reports/traffic.js';
import { call } from '../support/gateway.js';
import { type SimulatedGateway, startSimulatedGateway } from '../support/simulated-gateway.js';

const CHROMIUM = '/usr/bin/chromium';
const SHOTS = join(process.cwd(), 'test-output', 'console');
const available = existsSync(CHROMIUM);
if (!available && process.env.CI !== 'true') {
  console.warn(`console browser tests skipped: ${CHROMIUM} is missing (apt-get install -y chromium)`);
}

(available || process.env.CI === 'true' ? describe : describe.skip)('web console in Chromium', () => {
  let gateway: SimulatedGateway;
  let browser: Browser;
  let page: Page;
  let key: string;
  let traffic: Traffic;

  beforeAll(async () => {
    execFileSync(process.execPath, ['scripts/build-console.mjs'], { stdio: 'inherit' });
    mkdirSync(SHOTS, { recursive: true });
    gateway = await startSimulatedGateway();
    key = await gateway.key('prj_a');
    traffic = await driveTraffic(gateway, key);
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-quic',
        '--no-first-run',
        '--disable-component-update',
        '--disable-sync',
      ],
      // launch() gives every run a fresh, temporary user-data-dir of its own.
    });
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await gateway?.close();
  });

  const ready = (view: string) => page.waitForSelector(`#app[data-ready="${view}"]`, { timeout: 20_000 });

  it('refuses a wrong key with a clear message', async () => {
    await page.goto(`${gateway.url}/console`);
    await page.fill('#key', 'gw_this_key_does_not_exist_0000000000');
    await page.click('button[type=submit]');
    const error = page.getByTestId('signin-error');
    await error.getByText('That Gateway Key was not accepted.').waitFor();
    expect(await error.textContent()).toContain('starts with gw_');
    await page.screenshot({ path: join(SHOTS, 'wrong-key.png') });
  });

  it('signs in and shows the overview whose totals equal the ledger', async () => {
    const started = Date.now();
    await page.fill('#key', key);
    await page.click('button[type=submit]');
    await ready('overview');
    console.log(`console: overview interactive ${Date.now() - started} ms after sign-in`);
    const audit = await auditOf(gateway.store, 'prj_a');
    const committed = audit.reduce((sum, entry) => sum + entry.costMicrosUsd, 0);
    const ledger = traffic.runs.length
      ? (
          await Promise.all(
            traffic.runs.map((run) => call(gateway.url, 'GET', `/svc/v1/runs/${run.id}`, { key })),
          )
        )
          .map((result) => result.body.committed_micros_usd as number)
          .reduce((a, b) => a + b, 0)
      : 0;
    expect(ledger).toBe(committed);
    const tile = page.getByTestId('total-committed');
    expect(Number(await tile.getAttribute('data-value'))).toBe(committed);
    const dollars = (await tile.textContent())!.replace(/[$,]/g, '');
    expect(Math.round(Number(dollars) * 1_000_000)).toBe(committed);
    expect(Number(await page.getByTestId('total-calls').getAttribute('data-value'))).toBe(audit.length);
    expect(Number(await page.getByTestId('total-unknown').getAttribute('data-value'))).toBe(
      audit.filter((entry) => entry.state === 'unknown').length,
    );
    await page.waitForSelector('[data-testid=spend-chart] canvas');
    expect(await page.evaluate('sessionStorage.getItem("svc-console-key")')).toBe(key);
    expect(page.url()).not.toContain(key);
    await page.screenshot({ path: join(SHOTS, 'overview.png'), fullPage: true });
    await page.click('button[data-stack=connection]');
    await ready('overview');
    await page.getByText('Committed spend per day, by connection').waitFor();
  });

  it('opens a Work Unit, its Runs and their attempts', async () => {
    await page.click('nav a[data-view=work-units]');
    await ready('work-units');
    expect(await page.locator('tr[data-work-unit]').count()).toBe(traffic.workUnits.length);
    const unit = traffic.workUnits[1]!;
    const run = traffic.runs[1]!;
    await page.click(`tr[data-work-unit="${unit.id}"]`);
    await ready('work-units');
    await page.click(`button[data-attempts="${run.id}"]`);
    const rows = page.locator(`[data-testid="attempts-${run.id}"] tr[data-attempt]`);
    await rows.first().waitFor();
    const entries = (await auditOf(gateway.store, 'prj_a')).filter((entry) => entry.runId === run.id);
    expect(await rows.count()).toBe(entries.length);
    const costs = await page
      .locator(`[data-testid="attempts-${run.id}"] td[data-cost]`)
      .evaluateAll((cells) => cells.map((cell) => Number(cell.getAttribute('data-cost'))));
    expect(costs).toEqual(entries.map((entry) => entry.costMicrosUsd));
    await page.getByText('unknown', { exact: false }).first().waitFor();
    const spend = Number(await page.getByTestId('work-unit-spend').getAttribute('data-value'));
    expect(spend).toBe(entries.reduce((sum, entry) => sum + entry.costMicrosUsd, 0));
    await page.screenshot({ path: join(SHOTS, 'work-unit.png'), fullPage: true });
  });

  it('switches the cost-per-Outcome definition', async () => {
    await page.click('nav a[data-view=cost-per-outcome]');
    await ready('cost-per-outcome');
    await page.click('button[data-definition=odef_resolved]');
    await page.waitForSelector('[data-testid=cost-chart][data-definition=odef_resolved] canvas');
    const range = await page.evaluate(() => {
      const to = Math.ceil((Date.now() + 1) / 3_600_000) * 3_600_000;
      return { from: new Date(to - 30 * 86_400_000).toISOString(), to: new Date(to).toISOString() };
    });
    const report = await call(
      gateway.url,
      'GET',
      `/svc/v1/reports/cost-per-outcome?definition_id=odef_resolved&from=${range.from}&to=${range.to}`,
      { key },
    );
    const resolved = report.body.groups.find((group: { value: unknown }) => group.value === true);
    expect(Number(await page.getByTestId('cost-per-true').getAttribute('data-micros'))).toBe(
      resolved.cost_per_value_micros_usd,
    );
    await page.screenshot({ path: join(SHOTS, 'cost-per-outcome.png'), fullPage: true });
    await page.click('button[data-definition=odef_csat]');
    await page.waitForSelector('[data-testid=cost-chart][data-definition=odef_csat] canvas');
    expect(await page.getByTestId('cost-per-happy').count()).toBe(1);
    expect(gateway.logs.join('')).not.toContain(key);
  });
});
