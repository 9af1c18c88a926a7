/**
 * The web console in a real browser (Debian's Chromium driven by playwright-core) against a real
 * gateway with known traffic, at a desktop width (1366x900) and a phone width (390x844), one browser
 * and one page per width: a wrong key's message, sign-in, every page's figures equal to the API's
 * answers for the same query (read from the page), no horizontal page scroll at either width, the
 * Keys page's create and revoke round trip (the new key calls a model, then is refused), and the
 * Requests page finding a call by its svc-attempt-id, filtering, paging, and showing the attempt's
 * detail and captured bodies as the API does (and "needs captures:read" without that scope), and
 * the overview's spend by tag equal to the spend report grouped by that tag. Screenshots go to test-output/console/
 * (git-ignored). Without /usr/bin/chromium the suite is skipped (apt-get install chromium), except
 * under CI=true.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { awaitCapture, startCaptureWorld } from '../capture/support.js';
import { auditOf } from '../reports/recompute.js';
import { CHAT, driveTraffic, type Traffic, VENDORA } from '../reports/traffic.js';
import { call } from '../support/gateway.js';
import { messagesHeaders, type SimulatedGateway } from '../support/simulated-gateway.js';

const CHROMIUM = '/usr/bin/chromium';
const SHOTS = join(process.cwd(), 'test-output', 'console');
const WIDE = { width: 1366, height: 900 };
const PHONE = { width: 390, height: 844 };
const available = existsSync(CHROMIUM);
if (!available && process.env.CI !== 'true') {
  console.warn(`console browser tests skipped: ${CHROMIUM} is missing (apt-get install -y chromium)`);
}

/** The overview's and cost report's period as the console computes it (30 days to the end of this hour). */
function thirtyDays() {
  const to = Math.ceil((Date.now() + 1) / 3_600_000) * 3_600_000;
  return { from: new Date(to - 30 * 86_400_000).toISOString(), to: new Date(to).toISOString() };
}

function modelCallWith(
  gateway: SimulatedGateway,
  key: string,
  model: string,
  headers: Record<string, string> = {},
) {
  return fetch(`${gateway.url}/v1/messages`, {
    method: 'POST',
    headers: messagesHeaders(key, headers),
    body: JSON.stringify({ model, max_tokens: 32, messages: [{ role: 'user', content: 'Hello.' }] }),
  });
}

(available || process.env.CI === 'true' ? describe : describe.skip)('web console in Chromium', () => {
  let gateway: SimulatedGateway;
  let browser: Browser;
  let wide: Page;
  let phone: Page;
  let key: string;
  let traffic: Traffic;

  beforeAll(async () => {
    execFileSync(process.execPath, ['scripts/build-console.mjs'], { stdio: 'inherit' });
    mkdirSync(SHOTS, { recursive: true });
    // prj_a captures bodies, so the Requests page can show them.
    const world = await startCaptureWorld({ capture: { enabled: true } });
    gateway = { ...world.gateway, simulator: world.sim, close: world.close };
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
    wide = await browser.newPage({ viewport: WIDE });
    phone = await browser.newPage({ viewport: PHONE, isMobile: true, hasTouch: true });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await gateway?.close();
  });

  const ready = (page: Page, view: string) =>
    page.waitForSelector(`#app[data-ready="${view}"]`, { timeout: 20_000 });
  const api = async (path: string, as = key) => {
    const result = await call(gateway.url, 'GET', path, { key: as });
    expect(result.status, JSON.stringify(result.body)).toBe(200);
    return result.body;
  };
  /** Opens a view by its address and waits until it has rendered. */
  const open = async (page: Page, hash: string, view: string) => {
    await page.evaluate(`location.hash = ${JSON.stringify(hash)}`);
    await ready(page, view);
  };
  /**
   * No horizontal page scroll: the document is no wider than the viewport asked for (a mobile page
   * that overflows widens its layout viewport, so window.innerWidth alone would hide the overflow).
   */
  const fits = async (page: Page, name: string) => {
    const width = page.viewportSize()!.width;
    const [scrollWidth, innerWidth, wide] = (await page.evaluate(`[
      document.documentElement.scrollWidth,
      window.innerWidth,
      [...document.querySelectorAll('body *')]
        .filter((element) => !element.closest('.scroll, nav') && element.getBoundingClientRect().right > ${width} + 0.5)
        .slice(0, 5)
        .map((element) => element.tagName + '.' + element.className + ' ' + Math.round(element.getBoundingClientRect().right)),
    ]`)) as [number, number, string[]];
    expect([scrollWidth, innerWidth, wide], `${name} at ${width} px`).toEqual([
      Math.min(scrollWidth, width),
      width,
      wide.filter((entry) => entry.startsWith('none')),
    ]);
    await page.screenshot({ path: join(SHOTS, `${name}-${width}.png`), fullPage: true });
  };
  const signIn = async (page: Page, secret: string) => {
    await page.goto(`${gateway.url}/console/`);
    await page.fill('#key', secret);
    await page.click('button[type=submit]');
  };
  /** Signs the shared pages in when an earlier test did not (a describe run on its own with -t). */
  const signedIn = async (...pages: Page[]) => {
    for (const page of pages) {
      const stored = await page.evaluate('sessionStorage.getItem("svc-console-key")').catch(() => null);
      if (stored === key) continue;
      await signIn(page, key);
      await ready(page, 'overview');
    }
  };

  it('refuses a wrong key with a clear message', async () => {
    await wide.goto(`${gateway.url}/console`);
    await wide.fill('#key', 'gw_this_key_does_not_exist_0000000000');
    await wide.click('button[type=submit]');
    const error = wide.getByTestId('signin-error');
    await error.getByText('That Gateway Key was not accepted.').waitFor();
    expect(await error.textContent()).toContain('starts with gw_');
    await fits(wide, 'wrong-key');
  });

  it('signs in and shows the overview whose totals equal the ledger', async () => {
    const started = Date.now();
    await wide.fill('#key', key);
    await wide.click('button[type=submit]');
    await ready(wide, 'overview');
    console.log(`console: overview interactive ${Date.now() - started} ms after sign-in`);
    const audit = await auditOf(gateway.store, 'prj_a');
    const committed = audit.reduce((sum, entry) => sum + entry.costMicrosUsd, 0);
    const ledger = (await Promise.all(traffic.runs.map((run) => api(`/svc/v1/runs/${run.id}`)))).reduce(
      (sum, run) => sum + (run.committed_micros_usd as number),
      0,
    );
    expect(ledger).toBe(committed);
    const tile = wide.getByTestId('total-committed');
    expect(Number(await tile.getAttribute('data-value'))).toBe(committed);
    const dollars = (await tile.textContent())!.replace(/[$,]/g, '');
    expect(Math.round(Number(dollars) * 1_000_000)).toBe(committed);
    expect(Number(await wide.getByTestId('total-calls').getAttribute('data-value'))).toBe(audit.length);
    expect(Number(await wide.getByTestId('total-unknown').getAttribute('data-value'))).toBe(
      audit.filter((entry) => entry.state === 'unknown').length,
    );
    await wide.waitForSelector('[data-testid=spend-chart] canvas');
    expect(await wide.evaluate('sessionStorage.getItem("svc-console-key")')).toBe(key);
    expect(wide.url()).not.toContain(key);
    await fits(wide, 'overview');
    await wide.click('button[data-stack=connection]');
    await ready(wide, 'overview');
    await wide.getByText('Committed spend per day, by connection').waitFor();
  });

  it('opens a Work Unit, its Runs and their attempts', async () => {
    await wide.click('nav a[data-view=work-units]');
    await ready(wide, 'work-units');
    expect(await wide.locator('tr[data-work-unit]').count()).toBe(traffic.workUnits.length);
    const unit = traffic.workUnits[1]!;
    const run = traffic.runs[1]!;
    await wide.click(`tr[data-work-unit="${unit.id}"]`);
    await ready(wide, 'work-units');
    await wide.click(`button[data-attempts="${run.id}"]`);
    const rows = wide.locator(`[data-testid="attempts-${run.id}"] tr[data-attempt]`);
    await rows.first().waitFor();
    const entries = (await auditOf(gateway.store, 'prj_a')).filter((entry) => entry.runId === run.id);
    expect(await rows.count()).toBe(entries.length);
    const costs = await wide
      .locator(`[data-testid="attempts-${run.id}"] td[data-cost]`)
      .evaluateAll((cells) => cells.map((cell) => Number(cell.getAttribute('data-cost'))));
    expect(costs).toEqual(entries.map((entry) => entry.costMicrosUsd));
    await wide.getByText('unknown', { exact: false }).first().waitFor();
    const spend = Number(await wide.getByTestId('work-unit-spend').getAttribute('data-value'));
    expect(spend).toBe(entries.reduce((sum, entry) => sum + entry.costMicrosUsd, 0));
    await fits(wide, 'work-unit');
  });

  it('switches the cost-per-Outcome definition', async () => {
    await wide.click('nav a[data-view=cost-per-outcome]');
    await ready(wide, 'cost-per-outcome');
    await wide.click('button[data-definition=odef_resolved]');
    await wide.waitForSelector('[data-testid=cost-chart][data-definition=odef_resolved] canvas');
    const range = thirtyDays();
    const report = await api(
      `/svc/v1/reports/cost-per-outcome?definition_id=odef_resolved&from=${range.from}&to=${range.to}`,
    );
    const resolved = report.groups.find((group: { value: unknown }) => group.value === true);
    expect(Number(await wide.getByTestId('cost-per-true').getAttribute('data-micros'))).toBe(
      resolved.cost_per_value_micros_usd,
    );
    await fits(wide, 'cost-per-outcome');
    await wide.click('button[data-definition=odef_csat]');
    await wide.waitForSelector('[data-testid=cost-chart][data-definition=odef_csat] canvas');
    expect(await wide.getByTestId('cost-per-happy').count()).toBe(1);
    expect(gateway.logs.join('')).not.toContain(key);
  });

  it('shows every existing page at 390 px with the API’s figures and no sideways scroll', async () => {
    await signIn(phone, key);
    await ready(phone, 'overview');
    const range = thirtyDays();
    const spend = await api(`/svc/v1/reports/spend?group_by=day,alias&from=${range.from}&to=${range.to}`);
    expect(Number(await phone.getByTestId('total-committed').getAttribute('data-value'))).toBe(
      spend.totals.committed_micros_usd,
    );
    expect(Number(await phone.getByTestId('total-calls').getAttribute('data-value'))).toBe(
      spend.totals.calls,
    );
    await phone.waitForSelector('[data-testid=spend-chart] canvas');
    const chartWidth = await phone.locator('[data-testid=spend-chart] canvas').first().boundingBox();
    expect(chartWidth!.width).toBeLessThanOrEqual(PHONE.width);
    // The navigation is one line: every link's top is the same.
    const tops = await phone
      .locator('nav a:visible')
      .evaluateAll((links) => [
        ...new Set(links.map((link) => Math.round(link.getBoundingClientRect().top))),
      ]);
    expect(tops).toHaveLength(1);
    await fits(phone, 'overview');

    await phone.click('nav a[data-view=work-units]');
    await ready(phone, 'work-units');
    const units = await api('/svc/v1/work-units?limit=50');
    expect(await phone.locator('tr[data-work-unit]').count()).toBe(units.data.length);
    await fits(phone, 'work-units');

    const unit = traffic.workUnits[1]!;
    await open(phone, `#/work-units/${unit.id}`, 'work-units');
    const view = await api(`/svc/v1/work-units/${unit.id}`);
    expect(Number(await phone.getByTestId('work-unit-spend').getAttribute('data-value'))).toBe(
      view.runs.reduce(
        (sum: number, run: { committed_micros_usd: number }) => sum + run.committed_micros_usd,
        0,
      ),
    );
    await phone.click(`button[data-attempts="${traffic.runs[1]!.id}"]`);
    await phone.locator(`[data-testid="attempts-${traffic.runs[1]!.id}"] tr[data-attempt]`).first().waitFor();
    await fits(phone, 'work-unit');

    await phone.click('nav a[data-view=cost-per-outcome]');
    await ready(phone, 'cost-per-outcome');
    const definition = (await phone.getAttribute('[data-testid=cost-chart]', 'data-definition'))!;
    const report = await api(
      `/svc/v1/reports/cost-per-outcome?definition_id=${definition}&from=${range.from}&to=${range.to}`,
    );
    expect(Number(await phone.getByTestId('period-spend').getAttribute('data-value'))).toBe(
      report.total_spend_micros_usd,
    );
    await fits(phone, 'cost-per-outcome');
  });

  it('signs in on a phone and fits the sign-in form', async () => {
    const page = await browser.newPage({ viewport: PHONE });
    await page.goto(`${gateway.url}/console/`);
    await page.waitForSelector('#key');
    await fits(page, 'sign-in');
    await page.close();
  });

  describe('Keys', () => {
    it('shows Keys only to a keys:admin key', async () => {
      const reader = await gateway.key('prj_a', ['governance:read']);
      const page = await browser.newPage({ viewport: PHONE });
      await signIn(page, reader);
      await ready(page, 'overview');
      await page.waitForTimeout(200);
      expect(await page.locator('nav a[data-view=keys]').isVisible()).toBe(false);
      await open(page, '#/keys', 'keys');
      await page.getByText('Managing keys needs the keys:admin scope.').waitFor();
      await page.close();
      await wide.waitForSelector('nav a[data-view=keys]', { state: 'visible' });
    });

    for (const [name, viewport] of [
      ['phone', PHONE],
      ['wide', WIDE],
    ] as const) {
      it(`lists keys as the API does, creates one and revokes it (${name})`, async () => {
        const page = name === 'phone' ? phone : wide;
        await page.click('nav a[data-view=keys]');
        await ready(page, 'keys');
        const listed = await api('/svc/v1/keys');
        const rows = page.locator('[data-testid=key-table] tr[data-key]');
        expect(await rows.evaluateAll((all) => all.map((row) => row.getAttribute('data-key')))).toEqual(
          listed.data.map((one: { id: string }) => one.id),
        );
        expect(await rows.evaluateAll((all) => all.map((row) => row.getAttribute('data-status')))).toEqual(
          listed.data.map((one: { status: string }) => one.status),
        );
        await fits(page, 'keys');

        // A cap with a bad amount is refused in the form, naming the field.
        await page.fill('[data-field="caps.day"]', '2.5.1');
        await page.click('[data-testid=create-key]');
        await page.getByTestId('key-form-error').getByText('caps.day_micros_usd').waitFor();
        // An alias the gateway does not know: the API's own message.
        await page.fill('[data-field="caps.day"]', '2.5');
        await page.fill('[data-field=models]', 'no-such-alias');
        await page.click('[data-testid=create-key]');
        await page.getByTestId('key-form-error').getByText('not a configured model alias').waitFor();

        await page.fill('[data-field=label]', `console-${name}`);
        await page.fill('[data-field=models]', VENDORA);
        await page.fill('[data-field="limits.rpm"]', '120');
        await page.selectOption('[data-field=expiry]', '2592000');
        await page.click('[data-testid=create-key]');
        const secret = (await page.getByTestId('new-key-secret').textContent())!;
        expect(secret).toMatch(/^gw_/);
        const id = (await page.getByTestId('new-key').getAttribute('data-key-id'))!;
        const record = await api(`/svc/v1/keys/${id}`);
        expect(record).toMatchObject({
          label: `console-${name}`,
          scopes: ['inference'],
          models: [VENDORA],
          caps: { day_micros_usd: 2_500_000 },
          inference_limits: { requests_per_minute: 120 },
          status: 'active',
        });
        expect(Date.parse(record.expires_at) - Date.parse(record.created_at)).toBe(2_592_000_000);
        await page.locator(`tr[data-key="${id}"]`).waitFor();
        await fits(page, 'keys-created');

        // The new key calls its alias, and no other.
        const allowed = await modelCallWith(gateway, secret, VENDORA);
        expect(allowed.status, await allowed.text()).toBe(200);
        const other = await modelCallWith(gateway, secret, CHAT);
        expect(other.status).toBe(403);
        await other.text();

        await page.click(`button[data-revoke="${id}"]`);
        await page.click(`button[data-cancel-revoke="${id}"]`);
        expect((await api(`/svc/v1/keys/${id}`)).status).toBe('active');
        await page.click(`button[data-revoke="${id}"]`);
        await page.click(`button[data-confirm-revoke="${id}"]`);
        await page.locator(`tr[data-key="${id}"][data-status=revoked]`).waitFor();
        expect((await api(`/svc/v1/keys/${id}`)).status).toBe('revoked');
        const refused = await modelCallWith(gateway, secret, VENDORA);
        expect(refused.status).toBe(401);
        await refused.text();
        await page.getByTestId('dismiss-secret').click();
        expect(await page.getByTestId('new-key-secret').count()).toBe(0);
        expect(gateway.logs.join('')).not.toContain(secret);
        expect(viewport.width).toBe(await page.evaluate('window.innerWidth'));
      });
    }
  });
  describe('Requests', () => {
    let attemptId: string;

    beforeAll(async () => {
      await signedIn(wide, phone);
      const response = await modelCallWith(gateway, key, VENDORA, {
        'svc-tags': 'team=console, feature=phone',
      });
      expect(response.status, await response.text()).toBe(200);
      attemptId = response.headers.get('svc-attempt-id')!;
      expect(attemptId).toBeTruthy();
      await awaitCapture(gateway.url, key, attemptId);
    });

    for (const name of ['phone', 'wide'] as const) {
      it(`lists the API's attempts, filters by tag and opens the call by its svc-attempt-id (${name})`, async () => {
        const page = name === 'phone' ? phone : wide;
        await open(page, '#/requests', 'requests');
        const listed = await api('/svc/v1/attempts?limit=50');
        const ids = () =>
          page
            .locator('[data-testid=request-table] tr[data-attempt]')
            .evaluateAll((rows) => rows.map((row) => row.getAttribute('data-attempt')));
        expect(await ids()).toEqual(listed.data.map((one: { id: string }) => one.id));
        expect(listed.data[0].id).toBe(attemptId);
        const costs = await page
          .locator('[data-testid=request-table] td[data-cost]')
          .evaluateAll((cells) => cells.map((cell) => cell.getAttribute('data-cost')));
        expect(costs).toEqual(
          listed.data.map((one: { cost_micros_usd: number | null }) => String(one.cost_micros_usd ?? '')),
        );
        await fits(page, 'requests');

        // The filter form: a tag and the outcome, kept in the address.
        if (!(await page.locator('[data-filter=tags]').isVisible()))
          await page.click('[data-testid=filter-panel] summary');
        await page.fill('[data-filter=tags]', 'team=console');
        await page.selectOption('[data-filter=outcome]', 'completed');
        await page.click('[data-testid=apply-filters]');
        await expect
          .poll(() => page.evaluate<string>('location.hash'), { timeout: 10_000 })
          .toContain('tag.team=console');
        await ready(page, 'requests');
        const filtered = await api('/svc/v1/attempts?limit=50&tag.team=console&outcome=completed');
        expect(filtered.data.map((one: { id: string }) => one.id)).toContain(attemptId);
        expect(await ids()).toEqual(filtered.data.map((one: { id: string }) => one.id));
        await fits(page, 'requests-filtered');

        await page.click(`tr[data-attempt="${attemptId}"] a`);
        await ready(page, 'requests');
        const detail = await api(`/svc/v1/attempts/${attemptId}`);
        const shown = (field: string) =>
          page.locator(`dd[data-field="${field}"]`).first().getAttribute('data-value');
        expect(await shown('cost_micros_usd')).toBe(String(detail.cost_micros_usd));
        expect(await shown('reservation_micros_usd')).toBe(String(detail.reservation_micros_usd));
        expect(await shown('input_tokens')).toBe(String(detail.usage.input_tokens));
        expect(await shown('output_tokens')).toBe(String(detail.usage.output_tokens));
        expect(await shown('alias')).toBe(detail.alias);
        expect(await shown('key_id')).toBe(detail.key_id);
        expect(await shown('upstream_request_id')).toBe(detail.upstream_request_id ?? '');
        expect(await shown('trace_id')).toBe(detail.trace_id ?? '');
        expect(await shown('total_ms')).toBe(String(detail.timings.total_ms));
        expect(JSON.parse((await shown('tags'))!)).toEqual({ team: 'console', feature: 'phone' });
        if (detail.capture) expect(detail.capture.available).toBe(true);
        const captured = await api(`/svc/v1/attempts/${attemptId}/capture`);
        await page.waitForSelector('[data-testid=capture][data-state=shown]');
        const body = (await page.getByTestId('capture-request').locator('pre').textContent())!;
        expect(JSON.parse(body)).toEqual(JSON.parse(captured.request.body));
        expect(JSON.parse(body)).toMatchObject({
          model: VENDORA,
          messages: [{ role: 'user', content: 'Hello.' }],
        });
        expect(await page.getByTestId('capture-response').locator('pre').textContent()).toContain(
          JSON.parse(captured.response.body).content?.[0]?.text ?? '',
        );
        await fits(page, 'request');
      });
    }

    it('pages with the API cursor', async () => {
      await open(wide, '#/requests?limit=5', 'requests');
      const first = await api('/svc/v1/attempts?limit=5');
      const second = await api(`/svc/v1/attempts?limit=5&after=${encodeURIComponent(first.next_cursor)}`);
      await wide.click('[data-testid=next-page]');
      await expect
        .poll(() => wide.evaluate<string>('location.hash'), { timeout: 10_000 })
        .toContain('after=');
      await ready(wide, 'requests');
      // The page's ready mark is still the first page's until the second renders: wait for its rows.
      await expect
        .poll(
          () =>
            wide
              .locator('[data-testid=request-table] tr[data-attempt]')
              .evaluateAll((rows) => rows.map((row) => row.getAttribute('data-attempt'))),
          { timeout: 10_000 },
        )
        .toEqual(second.data.map((one: { id: string }) => one.id));
    });

    it('shows the API’s message for a filter it refuses, above the filters', async () => {
      await open(phone, '#/requests?http_status=abc', 'requests');
      const refused = await call(gateway.url, 'GET', '/svc/v1/attempts?http_status=abc', { key });
      expect(refused.status).toBe(400);
      const message = (await phone.getByTestId('notice-error').textContent())!;
      expect(message).toContain(refused.body.error.message);
      expect(message).toContain('http_status');
      expect(await phone.locator('[data-filter=http_status]').inputValue()).toBe('abc');
      await fits(phone, 'requests-refused');
    });

    it('says that the bodies need captures:read', async () => {
      const reader = await gateway.key('prj_a', ['governance:read']);
      const page = await browser.newPage({ viewport: PHONE });
      await signIn(page, reader);
      await ready(page, 'overview');
      await open(page, `#/requests/${attemptId}`, 'requests');
      await page.waitForSelector('[data-testid=capture][data-state=denied]');
      await page.getByText('Reading the bodies needs captures:read.').waitFor();
      await fits(page, 'request-denied');
      await page.close();
    });
  });
  describe('Spend by tag', () => {
    beforeAll(async () => {
      await signedIn(wide, phone);
      for (const team of ['search', 'search', 'billing']) {
        const response = await modelCallWith(gateway, key, CHAT, { 'svc-tags': `team=${team}` });
        expect(response.status, await response.text()).toBe(200);
      }
    });

    for (const name of ['phone', 'wide'] as const) {
      it(`groups the period's spend by a tag as the API does (${name})`, async () => {
        const page = name === 'phone' ? phone : wide;
        await open(page, '#/overview', 'overview');
        await page.selectOption('[data-testid=attribute-kind]', 'tag');
        await page.fill('[data-testid=attribute-key]', 'team');
        await page.click('[data-testid=group-spend]');
        await page.waitForSelector('[data-testid=spend-by-attribute][data-group-by="tag.team"]');
        await ready(page, 'overview');
        const range = thirtyDays();
        const report = await api(`/svc/v1/reports/spend?group_by=tag.team&from=${range.from}&to=${range.to}`);
        const expected = Object.fromEntries(
          (report.rows as Array<Record<string, unknown>>).map((row) => [
            row['tag.team'] === null ? '(none)' : String(row['tag.team']),
            String(row.committed_micros_usd),
          ]),
        );
        expect(Object.keys(expected)).toEqual(expect.arrayContaining(['search', 'billing', '(none)']));
        const shown = await page
          .locator('[data-testid=attribute-table] tr[data-attribute-value]')
          .evaluateAll((rows) =>
            rows.map((row) => [
              row.getAttribute('data-attribute-value'),
              row.querySelector('td[data-micros]')!.getAttribute('data-micros'),
            ]),
          );
        expect(Object.fromEntries(shown)).toEqual(expected);
        await page.waitForSelector('[data-testid=spend-by-attribute] canvas');
        await fits(page, 'spend-by-tag');
      });
    }
  });
  it('shows a Work Unit’s metadata in the list and on its page', async () => {
    await signedIn(phone);
    const unit = await traffic.api.createWorkUnit({ metadata: { customer: 'acme', plan: 'pro' } });
    await open(phone, '#/work-units', 'work-units');
    expect(await phone.locator(`tr[data-work-unit="${unit.id}"] td.metadata`).textContent()).toBe(
      'customer=acme, plan=pro',
    );
    await fits(phone, 'work-units-metadata');
    await open(phone, `#/work-units/${unit.id}`, 'work-units');
    expect(await phone.getByTestId('work-unit-metadata').textContent()).toBe(
      'metadata: customer=acme, plan=pro',
    );
    await fits(phone, 'work-unit-metadata');
  });
});
