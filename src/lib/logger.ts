/**
 * Structured JSON logs (pino). Credential-bearing fields are redacted wherever they appear; request
 * and response bodies are never logged.
 */
import { fstatSync } from 'node:fs';
import { type DestinationStream, destination as fileDestination, type Logger, pino } from 'pino';
import { isoTime } from './clock.js';

export const REDACTED_PATHS = [
  'req.headers.authorization',
  'req.headers["x-api-key"]',
  'headers.authorization',
  'headers["x-api-key"]',
  '*.authorization',
  '*["x-api-key"]',
  'secret',
  '*.secret',
  'apiKey',
  '*.apiKey',
  'password',
  '*.password',
];

/**
 * Standard output. When it is a file or a character device (a terminal, /dev/null), lines are
 * written synchronously: each is in the kernel when the log call returns, so a process killed
 * outright loses none. When it is a pipe or a socket, whose reader may stop reading, a synchronous
 * write would stall the gateway once the pipe is full, so lines are written asynchronously, as pino
 * does by default, and wait in memory for a slow reader (docs/decisions.md, issue 16 eleventh round).
 */
function standardOutput(): DestinationStream {
  return fileDestination({ dest: 1, sync: takesWritesAtOnce(1) });
}

/** The `time` field as pino's `stdTimeFunctions.isoTime` writes it, through the formatted-instant cache. */
function isoTimestamp(): string {
  return `,"time":"${isoTime(Date.now())}"`;
}

function takesWritesAtOnce(fd: number): boolean {
  try {
    const stat = fstatSync(fd);
    return stat.isFile() || stat.isCharacterDevice();
  } catch {
    return false;
  }
}

/**
 * `destination`: where lines go (tests pass their own); standard output by default.
 * `mixin`: fields added to every line (the trace and span ids when tracing is on).
 */
export function createLogger(
  level: string,
  destination?: DestinationStream,
  mixin?: () => Record<string, unknown>,
): Logger {
  return pino(
    {
      level,
      ...(mixin ? { mixin } : {}),
      base: { service: 'svc-gateway' },
      timestamp: isoTimestamp,
      redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
    },
    destination ?? standardOutput(),
  );
}
