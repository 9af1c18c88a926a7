/**
 * Fastify's per-request logger (`request.log`) without a pino child per request: the child, which
 * carries `request_id`, is made on the request's first line of its own (an error, a warning). The
 * line every request ends with is written by the observability hooks on the root logger with
 * `request_id` in it (http-hooks.ts), so a request that goes well makes no child at all. The
 * parent is the app's pino logger (lib/logger.ts).
 */
import type { FastifyBaseLogger } from 'fastify';
import type { Logger } from 'pino';

type Bindings = Record<string, unknown>;
type Level = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace';
type LogArgs = [unknown, ...unknown[]];

class LazyChildLogger {
  private made: FastifyBaseLogger | undefined;

  constructor(
    private readonly parent: FastifyBaseLogger,
    private readonly bindings: Bindings,
    private readonly options: object,
  ) {}

  private get logger(): FastifyBaseLogger {
    if (!this.made) this.made = this.parent.child(this.bindings, this.options);
    return this.made;
  }

  get level(): string {
    return this.made?.level ?? this.parent.level;
  }

  set level(level: string) {
    this.logger.level = level;
  }

  private write(level: Level, args: LogArgs): void {
    // Below the level: no child is made for a line pino would drop.
    if (!((this.made ?? this.parent) as Logger).isLevelEnabled(level)) return;
    (this.logger[level] as (...line: LogArgs) => void)(...args);
  }

  fatal(...args: LogArgs): void {
    this.write('fatal', args);
  }
  error(...args: LogArgs): void {
    this.write('error', args);
  }
  warn(...args: LogArgs): void {
    this.write('warn', args);
  }
  info(...args: LogArgs): void {
    this.write('info', args);
  }
  debug(...args: LogArgs): void {
    this.write('debug', args);
  }
  trace(...args: LogArgs): void {
    this.write('trace', args);
  }
  silent(): void {}

  child(bindings: Bindings, options?: object): FastifyBaseLogger {
    return this.logger.child(bindings, options);
  }
}

/** Fastify's `childLoggerFactory`. */
export function lazyChildLogger(
  logger: FastifyBaseLogger,
  bindings: Bindings,
  options: object,
): FastifyBaseLogger {
  return new LazyChildLogger(logger, bindings, options) as unknown as FastifyBaseLogger;
}
