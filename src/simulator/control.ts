/**
 * The simulator's HTTP control API, so a simulator in another process (benchmarks, the quick start)
 * can be driven like an in-process one:
 *   POST   /_sim/behaviour  {behaviour, model?, wire?, times?}   -> 204
 *   DELETE /_sim/behaviour                                       -> 204 (all behaviours cleared)
 *   GET    /_sim/requests?wire=&model=                           -> 200 {requests: RecordedRequest[]}
 *   DELETE /_sim/requests                                        -> 204
 * `connectSimulator(url)` is the matching client.
 */
import type { ServerResponse } from 'node:http';
import type { BehaviourBook, BehaviourMatch } from './behaviours.js';
import { sendJson } from './http-io.js';
import type { RequestFilter, RequestRecorder } from './recorder.js';
import type { RecordedRequest, SimBehaviour } from './types.js';

export const CONTROL_PREFIX = '/_sim/';

export interface ControlTarget {
  behaviours: BehaviourBook;
  recorder: RequestRecorder;
}

export function handleControl(
  target: ControlTarget,
  method: string,
  path: string,
  query: URLSearchParams,
  rawBody: Buffer,
  response: ServerResponse,
): void {
  const route = `${method} ${path}`;
  if (route === 'POST /_sim/behaviour') {
    const problem = setBehaviourFromBody(target, rawBody);
    if (problem === undefined) noContent(response);
    else sendJson(response, 400, controlError(problem));
  } else if (route === 'DELETE /_sim/behaviour') {
    target.behaviours.reset();
    noContent(response);
  } else if (route === 'GET /_sim/requests') {
    const filter: RequestFilter = {
      wire: query.get('wire') ?? undefined,
      model: query.get('model') ?? undefined,
    };
    sendJson(response, 200, { requests: target.recorder.list(filter) });
  } else if (route === 'DELETE /_sim/requests') {
    target.recorder.clear();
    noContent(response);
  } else {
    sendJson(response, 404, controlError(`No simulator control route ${route}`));
  }
}

/** Applies the body; returns what is wrong with it, if anything. */
function setBehaviourFromBody(target: ControlTarget, rawBody: Buffer): string | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(rawBody.toString('utf8'));
  } catch {
    return 'Body must be JSON: {behaviour, model?, wire?, times?}';
  }
  if (!isRecord(parsed) || !isRecord(parsed.behaviour)) {
    return 'Body must be an object with an object `behaviour`';
  }
  const match: BehaviourMatch = {
    model: typeof parsed.model === 'string' ? parsed.model : undefined,
    wire: typeof parsed.wire === 'string' ? parsed.wire : undefined,
    times: typeof parsed.times === 'number' ? parsed.times : undefined,
  };
  try {
    target.behaviours.set(parsed.behaviour as SimBehaviour, match);
  } catch (error) {
    return (error as Error).message;
  }
  return undefined;
}

function noContent(response: ServerResponse): void {
  response.writeHead(204);
  response.end();
}

function controlError(message: string): unknown {
  return { type: 'error', error: { type: 'invalid_request_error', message } };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Drives a simulator over HTTP (for one running in another process). */
export interface RemoteSimulator {
  readonly url: string;
  setBehaviour(behaviour: SimBehaviour, match?: BehaviourMatch): Promise<void>;
  reset(): Promise<void>;
  requests(filter?: RequestFilter): Promise<RecordedRequest[]>;
  clearRequests(): Promise<void>;
}

export function connectSimulator(url: string): RemoteSimulator {
  const base = url.replace(/\/+$/, '');
  const call = async (method: string, path: string, body?: unknown): Promise<unknown> => {
    const init: RequestInit = { method };
    if (body !== undefined) {
      init.body = JSON.stringify(body);
      init.headers = { 'content-type': 'application/json' };
    }
    const response = await fetch(`${base}${path}`, init);
    const text = await response.text();
    if (!response.ok) throw new Error(`simulator control ${method} ${path}: ${response.status} ${text}`);
    return text.length > 0 ? JSON.parse(text) : undefined;
  };
  return {
    url: base,
    async setBehaviour(behaviour, match = {}) {
      await call('POST', '/_sim/behaviour', { behaviour, ...match });
    },
    async reset() {
      await call('DELETE', '/_sim/behaviour');
    },
    async requests(filter = {}) {
      const query = new URLSearchParams();
      if (filter.wire !== undefined) query.set('wire', filter.wire);
      if (filter.model !== undefined) query.set('model', filter.model);
      const text = query.toString();
      const result = (await call('GET', `/_sim/requests${text.length > 0 ? `?${text}` : ''}`)) as {
        requests: RecordedRequest[];
      };
      return result.requests;
    },
    async clearRequests() {
      await call('DELETE', '/_sim/requests');
    },
  };
}
