import type { Bindings, ChildLoggerOptions, LevelWithSilentOrString } from 'pino';
import { type FastifyBaseLogger, type FastifyReply, type FastifyRequest, LogController } from 'fastify';

/** A request slower than this is logged at info whatever its status. */
export const SLOW_REQUEST_MS = 1000;

/**
 * One log line per request instead of Fastify's two, and at `info` only when it says something:
 * a client error, a failure (also logged with its stack by the error handler) or a slow answer.
 * Successful requests are logged at `debug` (LOG_LEVEL=debug shows every request): at info, two
 * lines per request cost the public catalog about a third of its throughput, and a load balancer
 * or the platform's access log already records them.
 */
export class RequestLogController extends LogController {
  override incomingRequest(): void {}

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    const slow = reply.elapsedTime > SLOW_REQUEST_MS;
    const level = error ? 'error' : reply.statusCode >= 400 || slow ? 'info' : 'debug';
    // The line's object is built only when its level is on: this runs for every request.
    if (!(request.log as FastifyBaseLogger & { isLevelEnabled(level: string): boolean }).isLevelEnabled(level)) return;
    const line = {
      method: request.method,
      url: request.url,
      statusCode: reply.statusCode,
      responseTime: Math.round(reply.elapsedTime * 10) / 10,
      ...(error ? { err: error } : {}),
    };
    request.log[level](line, slow ? 'slow request' : 'request completed');
  }
}

type Log = (...args: unknown[]) => void;

/**
 * A request's logger, made when the request first logs: most requests never do (a successful one
 * logs at debug), and making a pino child for every request (its bindings serialized to JSON, a
 * new object) was a measurable part of a cached catalog read. Every line a request logs still
 * carries its request id.
 */
export class LazyRequestLogger {
  #logger: FastifyBaseLogger | undefined;
  constructor(
    private readonly parent: FastifyBaseLogger,
    private readonly bindings: Bindings,
    private readonly options: ChildLoggerOptions | undefined,
  ) {}

  #real(): FastifyBaseLogger {
    this.#logger ??= this.parent.child(this.bindings, this.options);
    return this.#logger;
  }

  get level(): LevelWithSilentOrString {
    return this.#logger?.level ?? this.options?.level ?? this.parent.level;
  }

  set level(level: LevelWithSilentOrString) {
    this.#real().level = level;
  }

  /** Answered by the parent while this logger has its level: no child is made to say no. */
  isLevelEnabled(level: string): boolean {
    const source = this.#logger || this.options?.level !== undefined ? this.#real() : this.parent;
    return (source as FastifyBaseLogger & { isLevelEnabled(level: string): boolean }).isLevelEnabled(level);
  }

  fatal(...args: unknown[]): void {
    (this.#real().fatal as Log)(...args);
  }
  error(...args: unknown[]): void {
    (this.#real().error as Log)(...args);
  }
  warn(...args: unknown[]): void {
    (this.#real().warn as Log)(...args);
  }
  info(...args: unknown[]): void {
    (this.#real().info as Log)(...args);
  }
  debug(...args: unknown[]): void {
    (this.#real().debug as Log)(...args);
  }
  trace(...args: unknown[]): void {
    (this.#real().trace as Log)(...args);
  }
  silent(...args: unknown[]): void {
    (this.#real().silent as Log)(...args);
  }

  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.#real().child(bindings, options);
  }
}

/** Fastify's childLoggerFactory: each request's logger, made lazily (an empty options object is no options). */
export function lazyRequestLogger(
  parent: FastifyBaseLogger,
  bindings: Bindings,
  options: ChildLoggerOptions,
): FastifyBaseLogger {
  return new LazyRequestLogger(
    parent,
    bindings,
    Object.keys(options).length > 0 ? options : undefined,
  ) as unknown as FastifyBaseLogger;
}
