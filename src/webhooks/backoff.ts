/**
 * Retry delays of a failed delivery: exponential backoff with full jitter. The n-th retry (n >= 1)
 * waits a uniformly random time in [0, min(cap, base x 2^(n-1))]; retries continue until the
 * delivery's retry window (webhooks.retry_window_seconds, from when it was first due) ends, then
 * it is failed. With the defaults (10 s base, 1 h cap, 72 h window) the ceiling reaches 1 h after
 * 9 retries, so a receiver down for the whole window gets about 80 attempts per delivery.
 */
export interface BackoffSettings {
  baseMs: number;
  capMs: number;
}

export function retryDelayMs(
  retry: number,
  settings: BackoffSettings,
  random: () => number = Math.random,
): number {
  const exponent = Math.min(Math.max(retry - 1, 0), 40);
  const ceiling = Math.min(settings.capMs, settings.baseMs * 2 ** exponent);
  return Math.floor(random() * ceiling);
}
