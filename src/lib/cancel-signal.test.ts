import { describe, expect, it } from 'vitest';
import { ClientGone } from './cancel-signal.js';

describe('ClientGone', () => {
  it('runs each listener once on abort, with an AbortError reason, and not the removed ones', () => {
    const gone = new ClientGone();
    const calls: string[] = [];
    const removed = () => calls.push('removed');
    gone.addEventListener('abort', () => calls.push('a'));
    gone.addEventListener('abort', removed);
    gone.addEventListener('abort', () => calls.push('b'));
    gone.removeEventListener('abort', removed);
    expect(gone.aborted).toBe(false);
    gone.abort();
    gone.abort();
    expect(calls).toEqual(['a', 'b']);
    expect(gone.aborted).toBe(true);
    expect((gone.reason as Error).name).toBe('AbortError');
  });

  it('a listener added after the abort is not called (undici checks `aborted` first)', () => {
    const gone = new ClientGone();
    gone.abort();
    let called = false;
    gone.addEventListener('abort', () => {
      called = true;
    });
    expect(called).toBe(false);
  });
});
