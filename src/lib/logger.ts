/**
 * Structured JSON logs (pino). Credential-bearing fields are redacted wherever they appear; request
 * and response bodies are never logged.
 */
import { fstatSync, writeSync } from 'node:fs';
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
 * does by default, and wait in memory for a slow reader, up to UNREAD_PIPE_BYTES (docs/decisions.md,
 * "Operations and deployment").
 *
 * A write that fails (a full volume: ENOSPC; a closed pipe: EPIPE) never takes the process down:
 * the line is dropped and counted (`logWriteErrors()`, the metric svc_log_write_errors_total), and
 * standard error says so once when an episode of failures begins and once when writes succeed again.
 */
function standardOutput(): DestinationStream {
  if (takesWritesAtOnce(1)) return new SyncOutput(1, standardOutputHealth);
  const output = fileDestination({ dest: 1, sync: false, maxLength: UNREAD_PIPE_BYTES });
  // A reader gone for good (EPIPE): pino then discards every line without a word; they are counted here.
  let readerGone: Error | undefined;
  output.on('error', (error: Error & { code?: string }) => {
    if (error.code === 'EPIPE') readerGone = error;
    standardOutputHealth.failed(error);
  });
  output.on('drop', () =>
    standardOutputHealth.failed(new Error(`more than ${UNREAD_PIPE_BYTES} bytes unread`)),
  );
  output.on('write', () => standardOutputHealth.wrote());
  return {
    write(line: string) {
      if (readerGone) standardOutputHealth.failed(readerGone);
      else output.write(line);
    },
  };
}

/** Bytes of log lines kept for a pipe's reader that stopped reading; lines past it are dropped and counted. */
export const UNREAD_PIPE_BYTES = 64 * 1024 * 1024;

/** Failures of one output: a count, and one line on standard error per episode (start and end). */
class OutputHealth {
  errors = 0;
  private failing = false;

  failed(error: Error & { code?: string }): void {
    this.errors += 1;
    if (this.failing) return;
    this.failing = true;
    writeStandardError(
      `svc-gateway: cannot write log lines to standard output (${error.code ?? error.message}); dropping and counting them (svc_log_write_errors_total) until it takes them again\n`,
    );
  }

  wrote(): void {
    if (!this.failing) return;
    this.failing = false;
    writeStandardError(
      `svc-gateway: standard output takes log lines again (${this.errors} write errors so far)\n`,
    );
  }
}

/**
 * Standard error, written directly: a failure there (the same full volume) is ignored, never thrown
 * (`process.stderr.write` would throw or emit an unhandled `error` on a full file). main.ts writes
 * its banner through it too.
 */
export function writeStandardError(text: string): void {
  try {
    writeSync(2, text);
  } catch {
    // Nowhere left to say it; the counter still rises.
  }
}

const standardOutputHealth = new OutputHealth();

/** Log writes to standard output that failed (and lines dropped) since the process started. */
export function logWriteErrors(): number {
  return standardOutputHealth.errors;
}

const BUSY_RETRIES = 10;

/**
 * Synchronous writes to a file or character device, one line per call. A failed write drops its
 * line (counted) instead of keeping it for a retry: a full volume would otherwise grow the memory
 * by every line logged while it stays full. A terminal may answer EAGAIN: retried a few times.
 */
class SyncOutput implements DestinationStream {
  constructor(
    private readonly fd: number,
    private readonly health: OutputHealth,
  ) {}

  write(line: string): void {
    let rest: string | Buffer = line;
    let busy = 0;
    for (;;) {
      try {
        const written = typeof rest === 'string' ? writeSync(this.fd, rest) : writeSync(this.fd, rest);
        const size = typeof rest === 'string' ? Buffer.byteLength(rest) : rest.length;
        if (written >= size) {
          this.health.wrote();
          return;
        }
        // A partial write (the volume filled up during it): the rest goes next, and fails if still full.
        rest = (typeof rest === 'string' ? Buffer.from(rest) : rest).subarray(written);
      } catch (error) {
        const code = (error as { code?: string }).code;
        if ((code === 'EAGAIN' || code === 'EBUSY') && busy++ < BUSY_RETRIES) {
          Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10);
          continue;
        }
        this.health.failed(error as Error);
        return;
      }
    }
  }
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
 * shapes those lookups are megamorphic (docs/performance.md, "Logging"). The line is the
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
