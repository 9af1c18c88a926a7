/**
 * The one stream writer every simulated wire uses, applying the behaviour's stream failure modes.
 * Without `eventDelayMs` the events go out in one write (the fast path benchmarks rely on); with it,
 * one write per event with the delay in between. `dropAfterEvents` destroys the socket once that
 * many events were flushed; `stallAfterEvents` stops writing and leaves the response open. Writes
 * wait for 'drain' (http-io.ts), so a slow reader never makes the simulator buffer its stream.
 */
import type { ServerResponse } from 'node:http';
import { flushed, sleep, writeChunk } from './http-io.js';
import type { SimBehaviour } from './types.js';

/** The headers of a server-sent event stream; wires add their request id. */
export const EVENT_STREAM_HEADERS: Readonly<Record<string, string>> = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache',
};

export async function writeEventStream(
  response: ServerResponse,
  events: readonly string[],
  behaviour: SimBehaviour,
  headers: Record<string, string>,
): Promise<void> {
  response.writeHead(200, headers);
  const drop = behaviour.dropAfterEvents;
  const stall = behaviour.stallAfterEvents;
  const limit = Math.min(events.length, drop ?? Number.POSITIVE_INFINITY, stall ?? Number.POSITIVE_INFINITY);
  const delay = behaviour.eventDelayMs ?? 0;
  // Otherwise the headers leave with the first write.
  if (delay > 0 || limit === 0) response.flushHeaders();
  if (delay > 0) {
    for (let index = 0; index < limit; index++) {
      if (index > 0) await sleep(delay);
      if (!(await writeChunk(response, events[index] ?? ''))) return;
    }
  } else if (limit > 0 && !(await writeChunk(response, events.slice(0, limit).join('')))) {
    return;
  }
  if (drop !== undefined && drop <= limit) {
    await flushed(response);
    response.destroy();
    return;
  }
  if (stall !== undefined && stall <= limit) return;
  response.end();
}
