/**
 * Structured JSON logs (pino). Credential-bearing fields are redacted wherever they appear; request
 * and response bodies are never logged.
 */
import { type DestinationStream, type Logger, pino } from 'pino';

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

/** `mixin`: fields added to every line (the trace and span ids when tracing is on). */
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
    destination,
  );
}
