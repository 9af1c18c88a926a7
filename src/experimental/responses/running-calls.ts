import type { CancelSignal } from '../../lib/cancel-signal.js';

/** Upstream calls of deferred responses running in this process, so a cancel can abort them. */
export class RunningCalls {
  private readonly calls = new Map<string, AbortController>();

  start(id: string, parent: CancelSignal): AbortController {
    const controller = new AbortController();
    if (parent.aborted) controller.abort();
    else parent.addEventListener('abort', () => controller.abort(), { once: true });
    this.calls.set(id, controller);
    return controller;
  }

  finish(id: string): void {
    this.calls.delete(id);
  }

  /** Aborts the call when it runs here; a call on another replica ends at its next state check. */
  abort(id: string): void {
    this.calls.get(id)?.abort();
  }
}
