import type { FastifyBaseLogger } from 'fastify';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { lazyChildLogger } from './request-logger.js';

function capture(level: string) {
  const lines: Array<Record<string, unknown>> = [];
  const root = pino({ level }, { write: (text: string) => lines.push(JSON.parse(text)) });
  let children = 0;
  const child = root.child;
  // Inherited by every child pino makes: counts the children of children too.
  root.child = function (this: typeof root, ...args: Parameters<typeof child>) {
    children++;
    return child.apply(this, args);
  } as typeof root.child;
  return { root: root as unknown as FastifyBaseLogger, lines, children: () => children };
}

describe('the per-request logger', () => {
  it('makes no child until the request writes a line of its own, then writes with its bindings', () => {
    const { root, lines, children } = capture('info');
    const log = lazyChildLogger(root, { request_id: 'req_1' }, {});
    expect(children()).toBe(0);
    expect(log.level).toBe('info');
    log.warn({ code: 'x' }, 'request failed');
    log.error('again');
    expect(children()).toBe(1);
    expect(lines).toEqual([
      expect.objectContaining({ request_id: 'req_1', code: 'x', msg: 'request failed', level: 40 }),
      expect.objectContaining({ request_id: 'req_1', msg: 'again', level: 50 }),
    ]);
  });

  it('a line below the level makes no child and writes nothing', () => {
    const { root, lines, children } = capture('warn');
    const log = lazyChildLogger(root, { request_id: 'req_2' }, {});
    log.info('dropped');
    log.debug('dropped');
    expect(children()).toBe(0);
    expect(lines).toEqual([]);
    log.child({ extra: 1 }).warn('kept');
    expect(children()).toBe(2);
    expect(lines).toEqual([expect.objectContaining({ request_id: 'req_2', extra: 1, msg: 'kept' })]);
  });
});
