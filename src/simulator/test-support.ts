/**
 * Test helper: one simulator for a test file, started before its tests, closed after them, and
 * cleared of behaviours and recorded requests after each test. Not used at run time.
 */
import { afterAll, afterEach, beforeAll } from 'vitest';
import { readSse } from '../primitives/shared/sse.js';
import { type Simulator, type SimulatorOptions, startSimulator } from './server.js';

/** The returned simulator is usable inside tests and hooks registered after this call. */
export function useSimulator(options: SimulatorOptions = {}): Simulator {
  let started: Simulator | undefined;
  const current = (): Simulator => {
    if (started === undefined) throw new Error('the simulator starts in beforeAll');
    return started;
  };
  beforeAll(async () => {
    started = await startSimulator(options);
  });
  afterAll(async () => {
    await started?.close();
  });
  afterEach(() => {
    started?.reset();
    started?.clearRequests();
  });
  return {
    get url() {
      return current().url;
    },
    get port() {
      return current().port;
    },
    setBehaviour: (behaviour, match) => current().setBehaviour(behaviour, match),
    reset: () => current().reset(),
    requests: (filter) => current().requests(filter),
    clearRequests: () => current().clearRequests(),
    close: () => current().close(),
  };
}

/**
 * Reads a stream's event names as they arrive: `seen` fills while `reading` runs; `reading`
 * settles when the stream ends, and rejects when the socket is destroyed or the fetch aborted.
 */
export function readEventNames(response: Response): { seen: string[]; reading: Promise<void> } {
  const seen: string[] = [];
  const reading = (async () => {
    for await (const event of readSse(response.body!)) seen.push(event.event ?? '');
  })();
  return { seen, reading };
}
