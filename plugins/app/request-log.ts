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
