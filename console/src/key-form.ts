/**
 * The "create a Gateway Key" form of the Keys page: name, scopes (read from the gateway's OpenAPI
 * document, so the list is the server's), allowed aliases, spend caps in USD, inference limits and
 * an expiry. It builds the body of POST /svc/v1/keys (governance/key-schemas.ts) and shows the
 * API's message, naming the field, when the gateway refuses it.
 */
import { get, type Json } from './api.js';
import { h, notice } from './dom.js';

/** The scopes the gateway knows when its OpenAPI document cannot be read. */
const KNOWN_SCOPES = [
  'inference',
  'governance:read',
  'work_unit:create',
  'run:create',
  'run:attach',
  'outcome:write',
  'keys:admin',
  'captures:read',
];

const EXPIRIES: Array<[string, string]> = [
  ['never', 'never'],
  ['86400', 'in 1 day'],
  ['604800', 'in 7 days'],
  ['2592000', 'in 30 days'],
  ['7776000', 'in 90 days'],
  ['31536000', 'in 365 days'],
  ['at', 'at a date and time (UTC)'],
];

/** A form error that names the field, as the API's own messages do. */
class FieldError extends Error {}

async function scopesOfServer(): Promise<string[]> {
  try {
    const document = await get('/svc/v1/openapi.json');
    const items = document.components?.schemas?.CreateKeyBody?.properties?.scopes?.items;
    const scopes = ((items?.anyOf ?? items?.enum?.map((value: string) => ({ const: value })) ?? []) as Json[])
      .map((entry) => entry.const)
      .filter((scope): scope is string => typeof scope === 'string');
    return scopes.length > 0 ? scopes : KNOWN_SCOPES;
  } catch {
    return KNOWN_SCOPES;
  }
}

/** "12.5" or "$12.50" -> 12_500_000 micro-USD, exactly (no float arithmetic). */
export function microsOf(field: string, text: string): number | undefined {
  const trimmed = text.trim();
  if (trimmed === '') return undefined;
  const match = /^\$?(\d{1,9})(?:\.(\d{0,6}))?$/.exec(trimmed.replace(/,/g, ''));
  if (!match)
    throw new FieldError(
      `${field}: "${text}" is not an amount in USD (up to 6 decimals, for example 25 or 0.50).`,
    );
  return Number(match[1]) * 1_000_000 + Number((match[2] ?? '').padEnd(6, '0'));
}

function wholeOf(field: string, text: string): number | undefined {
  const trimmed = text.trim().replace(/,/g, '');
  if (trimmed === '') return undefined;
  if (!/^\d{1,13}$/.test(trimmed) || Number(trimmed) < 1)
    throw new FieldError(`${field}: "${text}" is not a whole number of at least 1.`);
  return Number(trimmed);
}

function input(name: string, label: string, attributes: Record<string, string> = {}) {
  const element = h('input', { name, 'data-field': name, autocomplete: 'off', ...attributes });
  return { element, field: h('label', { class: 'field' }, h('span', {}, label), element) };
}

export function keyForm(aliases: string[], create: (body: Json) => Promise<void>): HTMLElement {
  const name = input('label', 'Name', { maxlength: '200', placeholder: 'billing-service' });
  const models = input('models', 'Allowed aliases (comma separated; empty = every alias)', {
    list: 'alias-suggestions',
    placeholder: aliases.slice(0, 2).join(', '),
  });
  const lifetime = input('caps.lifetime', 'Lifetime cap (USD)', {
    inputmode: 'decimal',
    placeholder: 'none',
  });
  const day = input('caps.day', 'Daily cap (USD, UTC day)', { inputmode: 'decimal', placeholder: 'none' });
  const month = input('caps.month', 'Monthly cap (USD, UTC month)', {
    inputmode: 'decimal',
    placeholder: 'none',
  });
  const rpm = input('limits.rpm', 'Requests per minute', { inputmode: 'numeric', placeholder: 'no limit' });
  const tpm = input('limits.tpm', 'Tokens per minute', { inputmode: 'numeric', placeholder: 'no limit' });
  const expiry = h(
    'select',
    { name: 'expiry', 'data-field': 'expiry' },
    ...EXPIRIES.map(([value, text]) => h('option', { value }, text)),
  );
  const at = input('expires_at', 'Expires at (UTC)', { type: 'datetime-local' });
  at.field.hidden = true;
  expiry.addEventListener('change', () => {
    at.field.hidden = expiry.value !== 'at';
  });
  const scopeBox = h('div', { class: 'checks', 'data-testid': 'scope-choices' });
  void scopesOfServer().then((scopes) => {
    scopeBox.replaceChildren(
      ...scopes.map((scope) => {
        const box = h('input', { type: 'checkbox', name: 'scope', value: scope, 'data-scope': scope });
        box.checked = scope === 'inference';
        return h('label', {}, box, ` ${scope}`);
      }),
    );
  });
  const error = h('div', { 'data-testid': 'key-form-error', role: 'alert' });
  const submit = h('button', { class: 'primary', type: 'submit', 'data-testid': 'create-key' }, 'Create key');
  const form = h(
    'form',
    { class: 'card', 'data-testid': 'key-form' },
    h('h2', {}, 'Create a key'),
    h(
      'div',
      { class: 'form-grid' },
      name.field,
      models.field,
      h('div', { class: 'field' }, h('span', {}, 'Expiry'), expiry),
      at.field,
    ),
    h('div', { class: 'field scopes' }, h('span', {}, 'Scopes'), scopeBox),
    h('div', { class: 'form-grid' }, lifetime.field, day.field, month.field, rpm.field, tpm.field),
    h('datalist', { id: 'alias-suggestions' }, ...aliases.map((alias) => h('option', { value: alias }))),
    error,
    h('div', { class: 'form-actions' }, submit),
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    error.replaceChildren();
    let body: Json;
    try {
      body = bodyOf();
    } catch (failure) {
      error.replaceChildren(notice('error', 'Check the form.', (failure as Error).message));
      return;
    }
    submit.disabled = true;
    try {
      await create(body);
      form.reset();
      at.field.hidden = true;
      for (const box of scopeBox.querySelectorAll('input')) box.checked = box.value === 'inference';
    } catch (failure) {
      error.replaceChildren(
        notice('error', 'The gateway did not create the key.', (failure as Error).message),
      );
    } finally {
      submit.disabled = false;
    }
  });

  function bodyOf(): Json {
    const scopes = [...scopeBox.querySelectorAll('input')]
      .filter((box) => box.checked)
      .map((box) => box.value);
    if (scopes.length === 0) throw new FieldError('scopes: choose at least one scope.');
    const body: Json = { scopes };
    if (name.element.value.trim()) body.label = name.element.value.trim();
    const allowed = models.element.value
      .split(',')
      .map((alias) => alias.trim())
      .filter(Boolean);
    if (allowed.length > 0) body.models = [...new Set(allowed)];
    const caps: Json = {};
    const capFields: Array<[string, ReturnType<typeof input>]> = [
      ['lifetime_micros_usd', lifetime],
      ['day_micros_usd', day],
      ['month_micros_usd', month],
    ];
    for (const [field, control] of capFields) {
      const micros = microsOf(`caps.${field}`, control.element.value);
      if (micros !== undefined) caps[field] = micros;
    }
    if (Object.keys(caps).length > 0) body.caps = caps;
    const limits: Json = {};
    const requests = wholeOf('inference_limits.requests_per_minute', rpm.element.value);
    const tokens = wholeOf('inference_limits.tokens_per_minute', tpm.element.value);
    if (requests !== undefined) limits.requests_per_minute = requests;
    if (tokens !== undefined) limits.tokens_per_minute = tokens;
    if (Object.keys(limits).length > 0) body.inference_limits = limits;
    if (expiry.value === 'at') {
      if (!at.element.value) throw new FieldError('expires_at: pick the date and time (UTC).');
      body.expires_at = `${at.element.value.length === 16 ? `${at.element.value}:00` : at.element.value}Z`;
    } else if (expiry.value !== 'never') body.ttl_seconds = Number(expiry.value);
    return body;
  }

  return form;
}
