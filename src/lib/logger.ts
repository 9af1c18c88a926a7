/**
 * Structured JSON logs (pino). Credential-bearing fields are redacted wherever they appear; request
 * and response bodies are never logged.
 */
import { type DestinationStream, destination as fileDestination, type Logger, pino } from 'pino';

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
 * Standard output, written synchronously: each line is on its way when the log call returns, as
 * Node's own process.stdout does for files and pipes on Linux. Handing each line to libuv's thread
 * pool instead (pino's default) cost about 6 % of a streamed call's CPU on a gateway pinned to one
 * core, and lost the lines in flight when the process was killed (docs/performance.md, eleventh
 * round). Standard output must be read: a pipe nobody drains stalls the gateway (docs/operations.md).
 */
function standardOutput(): DestinationStream {
  return fileDestination({ dest: 1, sync: true });
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
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
    },
    destination ?? standardOutput(),
  );
}
