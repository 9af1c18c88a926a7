/**
 * Keys (#/keys): the Project's Gateway Keys over /svc/v1/keys, for a key with keys:admin. Lists every
 * key (scopes, caps, inference limits, allowed aliases, state, dates), creates one (the secret is
 * shown once, with a copy button, and kept nowhere) and revokes one after an inline confirmation.
 * The API's own messages are shown when it refuses a field.
 */
import { ApiError, get, type Json, post } from './api.js';
import { h, notice } from './dom.js';
import { count, shortTime, usd } from './format.js';
import { keyForm } from './key-form.js';
import { reflowTable } from './tables.js';

/** Whether the signed-in key may manage keys: GET /svc/v1/keys answers 403 without keys:admin. */
export async function canManageKeys(): Promise<boolean> {
  try {
    await get('/svc/v1/keys');
    return true;
  } catch {
    return false;
  }
}

export async function keysPage(root: HTMLElement) {
  let list: Json;
  try {
    list = await get('/svc/v1/keys');
  } catch (failure) {
    if (failure instanceof ApiError && failure.code === 'gateway_key_scope_denied') {
      root.replaceChildren(
        h('h1', {}, 'Gateway Keys'),
        notice(
          'error',
          'Managing keys needs the keys:admin scope.',
          'Sign in with a Gateway Key that has keys:admin (svc-gateway keys create --scopes keys:admin,governance:read).',
        ),
      );
      return;
    }
    throw failure;
  }
  const created = h('div', { 'data-testid': 'new-key-slot' });
  const listBox = h('div', {});
  const heading = h('h2', {});
  const show = (keys: Json[]) => {
    heading.textContent = `Keys (${keys.length})`;
    listBox.replaceChildren(keyTable(keys, refresh));
  };
  const refresh = async () => show((await get('/svc/v1/keys')).data as Json[]);
  const form = keyForm(await aliasSuggestions(), async (body) => {
    const key = await post('/svc/v1/keys', body);
    created.replaceChildren(secretCard(key, () => created.replaceChildren()));
    await refresh();
  });
  show(list.data as Json[]);
  root.replaceChildren(
    h('h1', {}, 'Gateway Keys'),
    h(
      'p',
      { class: 'muted' },
      'Keys of this Project. A key with keys:admin can grant any scope. Revoking takes effect at once on this replica and within the key cache time on the others.',
    ),
    created,
    form,
    heading,
    listBox,
  );
}

/** The model aliases the signed-in key can see (suggestions only: the field accepts any text). */
async function aliasSuggestions(): Promise<string[]> {
  try {
    return ((await get('/v1/models?limit=1000')).data as Json[]).map((model) => String(model.id));
  } catch {
    return [];
  }
}

function secretCard(key: Json, dismiss: () => void): HTMLElement {
  const secret = h('code', { class: 'secret', 'data-testid': 'new-key-secret' }, String(key.secret));
  const copied = h('span', { class: 'muted', role: 'status' });
  const copy = h('button', { 'data-testid': 'copy-secret', type: 'button' }, 'Copy');
  copy.addEventListener('click', async () => {
    copied.textContent = (await copyText(String(key.secret)))
      ? 'Copied.'
      : 'Copy failed: select the secret and copy it by hand.';
  });
  return h(
    'div',
    { class: 'card created', 'data-testid': 'new-key', 'data-key-id': key.id },
    h('h2', {}, `Key ${key.id} created`),
    h(
      'p',
      {},
      h('strong', {}, 'Copy its secret now: '),
      'it is shown only this once and cannot be recovered (a lost secret means revoking the key).',
    ),
    h('div', { class: 'secret-row' }, secret, copy, copied),
    h('button', { type: 'button', onclick: dismiss, 'data-testid': 'dismiss-secret' }, 'Done'),
  );
}

/** The clipboard API where the page is a secure context, else a selected text area and execCommand. */
async function copyText(text: string): Promise<boolean> {
  try {
    if (navigator.clipboard) {
      await navigator.clipboard.writeText(text);
      return true;
    }
  } catch {
    // Falls through to the older way (permissions, or an insecure origin).
  }
  const area = h('textarea', { class: 'offscreen', readonly: true });
  area.value = text;
  document.body.append(area);
  area.select();
  const done = document.execCommand('copy');
  area.remove();
  return done;
}

function capsText(caps: Json): string {
  const parts = [
    ['lifetime', caps.lifetime_micros_usd],
    ['day', caps.day_micros_usd],
    ['month', caps.month_micros_usd],
  ].filter(([, value]) => typeof value === 'number');
  return parts.length === 0 ? 'none' : parts.map(([name, value]) => `${name} ${usd(value)}`).join(' · ');
}

function limitsText(limits: Json): string {
  const parts: string[] = [];
  if (typeof limits.requests_per_minute === 'number')
    parts.push(`${count(limits.requests_per_minute)} requests/min`);
  if (typeof limits.tokens_per_minute === 'number')
    parts.push(`${count(limits.tokens_per_minute)} tokens/min`);
  return parts.length === 0 ? 'none' : parts.join(' · ');
}

function keyTable(keys: Json[], refresh: () => Promise<void>): HTMLElement {
  if (keys.length === 0) return notice('empty', 'This Project has no Gateway Keys yet.');
  const rows = keys.map((key) => {
    const actions = h('td', { 'data-label': '' });
    const message = h('div', {});
    const offer = () => {
      actions.replaceChildren(
        key.status === 'active'
          ? h('button', { type: 'button', 'data-revoke': key.id, onclick: confirm }, 'Revoke')
          : '',
        message,
      );
    };
    const confirm = () => {
      actions.replaceChildren(
        h('span', {}, `Revoke ${key.label ?? key.id}? Calls with it are refused from now on. `),
        h(
          'button',
          { type: 'button', class: 'danger', 'data-confirm-revoke': key.id, onclick: revoke },
          'Revoke key',
        ),
        ' ',
        h('button', { type: 'button', 'data-cancel-revoke': key.id, onclick: offer }, 'Cancel'),
        message,
      );
    };
    const revoke = async () => {
      try {
        await post(`/svc/v1/keys/${encodeURIComponent(key.id)}/revoke`, {});
        await refresh();
      } catch (failure) {
        message.replaceChildren(
          notice(
            'error',
            'The key was not revoked.',
            failure instanceof Error ? failure.message : String(failure),
          ),
        );
      }
    };
    offer();
    return {
      attributes: { 'data-key': key.id, 'data-status': key.status },
      cells: [
        h(
          'td',
          { 'data-label': 'key' },
          h('div', {}, key.label ?? '—'),
          h('div', { class: 'caption' }, key.id),
        ),
        h('td', { 'data-label': 'scopes' }, (key.scopes as string[]).join(', ')),
        h(
          'td',
          { 'data-label': 'aliases' },
          key.models === null ? 'every alias' : (key.models as string[]).join(', '),
        ),
        h('td', { 'data-label': 'caps' }, capsText(key.caps)),
        h('td', { 'data-label': 'limits' }, limitsText(key.inference_limits)),
        h(
          'td',
          { 'data-label': 'state' },
          h(
            'span',
            { class: key.status === 'active' ? 'badge ok' : 'badge warn', 'data-status': key.status },
            key.status,
          ),
          key.revoked_at ? h('div', { class: 'caption' }, `revoked ${shortTime(key.revoked_at)}`) : null,
        ),
        h('td', { 'data-label': 'created', class: 'time' }, shortTime(key.created_at)),
        h(
          'td',
          { 'data-label': 'expires', class: 'time' },
          key.expires_at === null ? 'never' : shortTime(key.expires_at),
        ),
        actions,
      ],
    };
  });
  return reflowTable(
    { 'data-testid': 'key-table' },
    ['key', 'scopes', 'allowed aliases', 'caps', 'inference limits', 'state', 'created', 'expires', ''],
    rows,
  );
}
