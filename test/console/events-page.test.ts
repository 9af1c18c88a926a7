/**
 * The console's Events page (#/events) in Chromium against a real gateway with a webhook receiver
 * on loopback: the events list and its type filter, an endpoint's deliveries, the Redeliver button
 * (the receiver gets the event again), at 390 px (no horizontal page scroll) and 1366 px.
 * Without /usr/bin/chromium the suite is skipped, except under CI=true.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Api } from '../governance/support.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { appendEvents, fastWebhooks, newEvent, Receiver, waitFor } from '../webhooks/support.js';

const CHROMIUM = '/usr/bin/chromium';
const SHOTS = join(process.cwd(), 'test-output', 'console');
const available = existsSync(CHROMIUM);

(available || process.env.CI === 'true' ? describe : describe.skip)('console Events page in Chromium', () => {
  let gateway: TestGateway;
  let browser: Browser;
  let key: string;
  const receiver = new Receiver();

  beforeAll(async () => {
    execFileSync(process.execPath, ['scripts/build-console.mjs'], { stdio: 'inherit' });
    mkdirSync(SHOTS, { recursive: true });
    await receiver.start();
    gateway = await startTestGateway({ config: { webhooks: fastWebhooks() } });
    key = await gateway.key('prj_a');
    const api = new Api(gateway.url, key);
    const created = await api.post('/svc/v1/webhook-endpoints', {
      url: receiver.url,
      description: 'budget alerts',
    });
    expect(created.status).toBe(201);
    await appendEvents(gateway.store, [
      newEvent('prj_a', 'run_console_1', 'run.budget_threshold'),
      newEvent('prj_a', 'run_console_2', 'run.depleted'),
    ]);
    await waitFor(() => receiver.requests.length >= 2, 10_000, 'the deliveries');
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--no-first-run',
        '--disable-component-update',
      ],
    });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await gateway?.close();
    await receiver.stop();
  });

  async function openEvents(width: number): Promise<Page> {
    const page = await browser.newPage({ viewport: { width, height: 900 } });
    await page.goto(`${gateway.url}/console`);
    await page.fill('#key', key);
    await page.click('button[type=submit]');
    await page.waitForSelector('#app[data-ready="overview"]', { timeout: 20_000 });
    await page.click('nav a[data-view=events]');
    await page.waitForSelector('#app[data-ready="events"]', { timeout: 20_000 });
    return page;
  }

  for (const width of [390, 1366]) {
    it(`lists events and deliveries without horizontal page scroll at ${width} px`, async () => {
      const page = await openEvents(width);
      expect(await page.locator('tr[data-event]').count()).toBe(2);
      expect(await page.locator('tr[data-delivery][data-status=succeeded]').count()).toBe(2);
      const overflow = Number(
        await page.evaluate('document.documentElement.scrollWidth - document.documentElement.clientWidth'),
      );
      expect(overflow).toBeLessThanOrEqual(0);
      await page.screenshot({ path: join(SHOTS, `events-${width}.png`), fullPage: true });
      await page.close();
    });
  }

  it('filters events by type and redelivers a delivery', async () => {
    const page = await openEvents(1366);
    await page.fill('input[name=type]', 'run.depleted');
    await page.click('[data-testid=event-filters] button[type=submit]');
    // Polled from the test (the console's CSP forbids the string evaluation waitForFunction uses).
    await expect.poll(() => page.locator('tr[data-event]').count(), { timeout: 10_000 }).toBe(1);
    const before = receiver.requests.length;
    await page.locator('[data-testid=redeliver]').first().click();
    await waitFor(() => receiver.requests.length > before, 10_000, 'the redelivery');
    await page.close();
  });
});
