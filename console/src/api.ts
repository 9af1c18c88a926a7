/**
 * The console's only way to the gateway: same-origin fetch with the Gateway Key as a bearer token.
 * The key lives in sessionStorage (gone when the tab closes); it is never put in a URL.
 */
const STORAGE = 'svc-console-key';

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export function storedKey(): string | null {
  return sessionStorage.getItem(STORAGE);
}

export function storeKey(key: string): void {
  sessionStorage.setItem(STORAGE, key);
}

export function forgetKey(): void {
  sessionStorage.removeItem(STORAGE);
}

// biome-ignore lint/suspicious/noExplicitAny: response bodies are JSON read by field
export type Json = Record<string, any>;

async function send(path: string, init: RequestInit, key: string | null): Promise<Json> {
  let response: Response;
  try {
    response = await fetch(path, {
      ...init,
      headers: { authorization: `Bearer ${key ?? ''}`, accept: 'application/json', ...init.headers },
    });
  } catch {
    throw new ApiError(0, 'network', 'The gateway did not answer.');
  }
  const body = (await response.json().catch(() => ({}))) as Json;
  if (!response.ok) {
    throw new ApiError(
      response.status,
      body.error?.code ?? 'unknown',
      body.error?.message ?? response.statusText,
    );
  }
  return body;
}

export function get(path: string, key = storedKey()): Promise<Json> {
  return send(path, {}, key);
}

/** A fresh Idempotency-Key (getRandomValues works on plain http too, where randomUUID does not). */
function idempotencyKey(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return `console-${Array.from(bytes, (byte) => byte.toString(16).padStart(2, '0')).join('')}`;
}

/** A governance POST (JSON body, its own Idempotency-Key: one click is one write). */
export function post(path: string, body: Json): Promise<Json> {
  return send(
    path,
    {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'idempotency-key': idempotencyKey() },
      body: JSON.stringify(body),
    },
    storedKey(),
  );
}

/** Every page of a list (bounded: the console never loads more than `max` records). */
export async function all(path: string, max = 1000): Promise<Json[]> {
  const items: Json[] = [];
  let cursor: string | null = null;
  do {
    const separator = path.includes('?') ? '&' : '?';
    const page: Json = await get(
      `${path}${separator}limit=200${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
    );
    items.push(...page.data);
    cursor = page.next_cursor;
  } while (cursor && items.length < max);
  return items;
}

/** What a failed request means for the person looking at the console, and what to do. */
export function explain(error: unknown): { title: string; advice: string } {
  if (!(error instanceof ApiError)) return { title: 'Something went wrong.', advice: String(error) };
  switch (error.code) {
    case 'authentication_failed':
      return {
        title: 'That Gateway Key was not accepted.',
        advice: 'Check that you pasted the whole key (it starts with gw_) and that it has not been revoked.',
      };
    case 'gateway_key_scope_denied': {
      const scope = /lacks the scope ([\w:]+)/.exec(error.message)?.[1] ?? 'governance:read';
      return {
        title: `This Gateway Key lacks the scope ${scope}.`,
        advice: `Sign in with a key that has the ${scope} scope (svc-gateway keys create --scopes ${scope}).`,
      };
    }
    case 'governance_unavailable':
      return {
        title: 'The gateway cannot reach its store right now.',
        advice: 'Retry in a moment; if it persists, check the database the gateway uses.',
      };
    case 'governance_rate_limited':
      return { title: 'Too many requests for this key.', advice: 'Wait a few seconds and retry.' };
    case 'network':
      return { title: 'The gateway did not answer.', advice: 'Check that it is running, then retry.' };
    default:
      return { title: `The gateway answered ${error.status} (${error.code}).`, advice: error.message };
  }
}
