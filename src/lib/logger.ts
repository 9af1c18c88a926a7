/**
 * Structured JSON logs (pino). Credential-bearing fields are redacted wherever they appear; request
 * and response bodies are never logged.
 */
import { fstatSync } from 'node:fs';
import { type DestinationStream, destination as fileDestination, type Logger, pino, symbols } from 'pino';
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

/** pino's per-logger state read here: each level's opening, the bindings, the message key, the end. */
interface PinoInternals {
  [symbols.lsCacheSym]: Record<number, string>;
  [symbols.chindingsSym]: string;
  [symbols.messageKeySym]: string;
  [symbols.endSym]: string;
}

/**
 * A child of `log` for lines made only of fixed keys with string, number, boolean or null values,
 * such as the request line: no redaction (no such key is a redacted path) and the fields formatted
 * by one `JSON.stringify` instead of pino's walk over them, which looks every key up in its
 * serializers and stringifiers and escapes each string in JavaScript; across the gateway's many line
 * shapes those lookups are megamorphic (docs/performance.md, nineteenth round). The line is the
 * one pino would write: the same opening, time, bindings, fields in order, message and end; an
 * undefined field is left out and a non-finite number written as null, as pino does. pino still
 * applies the level, the mixin and the destination (`pino.symbols` is pino's interface for this).
 */
export function plainFieldsLogger(log: Logger): Logger {
  const child = log.child({}, { redact: [] });
  const internals = child as unknown as PinoInternals & Record<symbol, unknown>;
  // The message key is fixed when the logger is made, and the request line's message is one
  // constant: its text is formatted once, not on every line.
  const key = JSON.stringify(internals[symbols.messageKeySym]);
  let lastMessage: unknown;
  let messageText = '';
  internals[symbols.asJsonSym] = function plainFieldsJson(
    this: PinoInternals,
    fields: object,
    message: unknown,
    level: number,
    time: string,
  ): string {
    if (message !== lastMessage) {
      lastMessage = message;
      messageText = message === undefined ? '' : `,${key}:${JSON.stringify(message)}`;
    }
    const json = JSON.stringify(fields);
    const body = json.length > 2 ? `,${json.slice(1, -1)}` : '';
    return `${this[symbols.lsCacheSym][level]!}${time}${this[symbols.chindingsSym]}${body}${messageText}${this[symbols.endSym]}`;
  };
  return child;
}
