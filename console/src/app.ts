/**
 * The svc gateway console: sign in with a Gateway Key (governance:read), then hash-routed views
 * (#/overview, #/work-units, #/work-units/<id>, #/cost-per-outcome, #/requests, #/requests/<id>,
 * #/events, #/keys). The Keys link shows only for a key with keys:admin. Plain DOM; charts by uPlot.
 */
import { ApiError, explain, forgetKey, get, storedKey, storeKey } from './api.js';
import { costPerOutcome } from './cost-per-outcome.js';
import { h, mount, notice } from './dom.js';
import { eventsPage } from './events.js';
import { canManageKeys, keysPage } from './keys.js';
import { overview } from './overview.js';
import type { Period } from './period.js';
import { requestDetail } from './request-detail.js';
import { requestList } from './requests.js';
import { workUnitDetail, workUnitList } from './work-units.js';

const app = document.getElementById('app')!;
const nav = document.getElementById('nav')!;
const who = document.getElementById('who')!;
const keysLink = nav.querySelector<HTMLElement>('a[data-view=keys]')!;
/** Whether the signed-in key has keys:admin, asked once per sign-in. */
let keysAccess: { key: string; allowed: Promise<boolean> } | null = null;
const settings = {
  period: 30 as Period,
  stack: 'alias' as 'alias' | 'connection',
  definition: null as string | null,
};

function signIn(message?: { title: string; advice: string }) {
  nav.hidden = true;
  who.replaceChildren();
  const input = h('input', {
    type: 'password',
    id: 'key',
    name: 'key',
    autocomplete: 'off',
    placeholder: 'gw_…',
    'aria-label': 'Gateway Key',
  });
  const error = h(
    'div',
    { 'data-testid': 'signin-error', role: 'alert' },
    message ? notice('error', message.title, message.advice) : null,
  );
  const form = h(
    'form',
    { class: 'card signin' },
    h('h1', {}, 'Sign in'),
    h(
      'p',
      { class: 'muted' },
      'Paste a Gateway Key with the governance:read scope. It stays in this tab (session storage) and is sent only as a bearer token.',
    ),
    input,
    error,
    h('button', { class: 'primary', type: 'submit' }, 'Sign in'),
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const key = input.value.trim();
    try {
      const landing = await landingFor(key);
      storeKey(key);
      if (!location.hash || location.hash === '#/') location.hash = landing;
      else void route();
    } catch (failure) {
      const explained = explain(failure);
      error.replaceChildren(notice('error', explained.title, explained.advice));
    }
  });
  mount(app, form);
  input.focus();
}

/**
 * Checks the key before keeping it: governance:read opens the overview; a key with only keys:admin
 * may still manage keys, so it lands on #/keys.
 */
async function landingFor(key: string): Promise<string> {
  try {
    await get('/svc/v1/outcome-definitions', key);
    return '#/overview';
  } catch (failure) {
    if (!(failure instanceof ApiError) || failure.code !== 'gateway_key_scope_denied') throw failure;
    await get('/svc/v1/keys', key).catch(() => {
      throw failure;
    });
    return '#/keys';
  }
}

async function route() {
  if (!storedKey()) return signIn();
  nav.hidden = false;
  who.replaceChildren(
    h(
      'button',
      {
        'data-testid': 'sign-out',
        onclick: () => {
          forgetKey();
          signIn();
        },
      },
      'Sign out',
    ),
  );
  delete app.dataset.ready;
  const key = storedKey()!;
  if (keysAccess?.key !== key) keysAccess = { key, allowed: canManageKeys() };
  void keysAccess.allowed.then((allowed) => {
    if (keysAccess?.key === key) keysLink.hidden = !allowed;
  });
  const [path = '', query = ''] = location.hash.replace(/^#/, '').split('?');
  const parts = path.split('/').filter(Boolean);
  const view = parts[0] ?? 'overview';
  for (const link of nav.querySelectorAll('a')) link.classList.toggle('active', link.dataset.view === view);
  try {
    switch (view) {
      case 'work-units':
        if (parts[1]) await workUnitDetail(app, decodeURIComponent(parts[1]));
        else await workUnitList(app, new URLSearchParams(query).get('status') ?? '');
        break;
      case 'requests':
        if (parts[1]) await requestDetail(app, decodeURIComponent(parts[1]));
        else await requestList(app, new URLSearchParams(query));
        break;
      case 'keys':
        await keysPage(app);
        break;
      case 'cost-per-outcome':
        await costPerOutcome(app, settings.period, settings.definition, (period, definition) => {
          Object.assign(settings, { period, definition });
          void route();
        });
        break;
      case 'events':
        await eventsPage(app, new URLSearchParams(query), () => void route());
        break;
      default:
        await overview(
          app,
          settings.period,
          settings.stack,
          (period, stack) => {
            Object.assign(settings, { period, stack });
            void route();
          },
          {
            groupBy: new URLSearchParams(query).get('group_by'),
            choose: (groupBy) => {
              location.hash = groupBy ? `#/overview?group_by=${encodeURIComponent(groupBy)}` : '#/overview';
            },
          },
        );
    }
    app.dataset.ready = view;
  } catch (failure) {
    const explained = explain(failure);
    if (failure instanceof Error && 'status' in failure && failure.status === 401) {
      forgetKey();
      return signIn(explained);
    }
    mount(
      app,
      notice(
        'error',
        explained.title,
        explained.advice,
        ' ',
        h('button', { onclick: () => void route() }, 'Retry'),
      ),
    );
  }
}

window.addEventListener('hashchange', () => void route());
void route();
