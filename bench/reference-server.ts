import { createServer } from 'node:http';
import fastifyRateLimit from '@fastify/rate-limit';
import Fastify from 'fastify';
import { REFERENCE_KINDS, type ReferenceKind } from './reference-kinds.js';

/**
 * A reference server for bench/packs-list.ts, run as a child process: it answers every request
 * with one recorded response (REPLAY: status, headers, base64 body) on PORT.
 * - `node`: bare node:http, the figure every ratio is taken against;
 * - `fastify`: a Fastify app with one route and nothing else (no logger, no hooks);
 * - `fastify-rate-limit`: the same with @fastify/rate-limit registered as the service registers it
 *   (global, in memory, a key generator of its own), to show what the limiter alone costs;
 * - `fastify-many-routes`: the replay at `/api/packs` two plugins deep, beside 60 other routes in
 *   12 plugins of their own (the service's size and shape), with no hook: what an app of that
 *   size costs the framework on one route, before any work of the app's own.
 * Readiness is reported over IPC.
 */

const kind = process.env.REFERENCE_KIND as ReferenceKind;
if (!REFERENCE_KINDS.includes(kind)) throw new Error(`REFERENCE_KIND must be one of ${REFERENCE_KINDS.join(', ')}`);
const { status, headers, body } = JSON.parse(process.env.REPLAY ?? '') as {
  status: number;
  headers: Record<string, string>;
  body: string;
};
const bytes = Buffer.from(body, 'base64');
const port = Number(process.env.PORT);

if (kind === 'node') {
  const server = createServer((_request, response) => {
    response.writeHead(status, headers);
    response.end(bytes);
  });
  server.listen(port, '127.0.0.1', () => process.send?.('listening'));
} else {
  const app = Fastify({ logger: false });
  if (kind === 'fastify-rate-limit') {
    await app.register(fastifyRateLimit, {
      global: true,
      max: 1_000_000_000,
      timeWindow: 60_000,
      skipOnError: true,
      // As in the service: synchronous for a request without a token.
      keyGenerator: (request) => `ip:${request.ip}`,
    });
  }
  // The recorded rate-limit headers are the limiter's to set when it runs.
  const replayed = Object.fromEntries(
    Object.entries(headers).filter(([name]) => kind === 'fastify' || !name.startsWith('x-ratelimit-')),
  );
  const replay = (
    _request: unknown,
    reply: {
      code: (status: number) => { headers: (values: Record<string, string>) => { send: (body: Buffer) => unknown } };
    },
  ) => reply.code(status).headers(replayed).send(bytes);
  if (kind === 'fastify-many-routes') {
    await app.register(
      async (api) => {
        for (let group = 0; group < 12; group++) {
          await api.register(
            async (routes) => {
              for (let route = 0; route < 5; route++) routes.get(`/item-${route}/:id`, replay);
            },
            { prefix: `/group-${group}` },
          );
        }
        await api.register(async (packs) => packs.get('/', replay), { prefix: '/packs' });
      },
      { prefix: '/api' },
    );
  } else app.get('/*', replay);
  await app.listen({ port, host: '127.0.0.1' });
  process.send?.('listening');
}
