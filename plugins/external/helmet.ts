import type { IncomingMessage, ServerResponse } from 'node:http';
import fp from 'fastify-plugin';
import helmet, { type HelmetOptions } from 'helmet';

/**
 * Security headers (helmet) on every response. The API serves JSON only, so the default policy
 * is strict; Swagger UI's pages drop it for their own content-security policy (swagger-ui.ts).
 *
 * With a static configuration helmet's headers are the same for every request, so they are
 * computed once here and added with `reply.headers`. @fastify/helmet builds a new helmet
 * middleware (re-parsing the policy) for every request, which cost 30% of the public catalog's
 * throughput (docs/benchmarks.md).
 */

/** The headers helmet sets for `options`, captured from one run of its middleware. */
export function securityHeaders(options: HelmetOptions): Record<string, string> {
  const headers: Record<string, string> = {};
  const response = {
    setHeader(name: string, value: string | number) {
      headers[name.toLowerCase()] = String(value);
    },
    removeHeader(name: string) {
      delete headers[name.toLowerCase()];
    },
  };
  let failure: unknown;
  helmet(options)({} as IncomingMessage, response as unknown as ServerResponse, (error?: unknown) => {
    failure = error;
  });
  if (failure) throw failure;
  return headers;
}

export default fp(
  async (fastify) => {
    // HSTS belongs to the TLS-terminating proxy in front, and only when HTTPS is really in use.
    const base: HelmetOptions = { strictTransportSecurity: fastify.config.isProduction };
    // upgrade-insecure-requests only over https: over plain http it points browsers at an https
    // origin that may not exist.
    const apiHeaders = {
      http: securityHeaders({ ...base, contentSecurityPolicy: { directives: { upgradeInsecureRequests: null } } }),
      https: securityHeaders(base),
    };
    fastify.addHook('onRequest', (request, reply, done) => {
      reply.headers(request.protocol === 'https' ? apiHeaders.https : apiHeaders.http);
      done();
    });
  },
  { name: 'helmet', dependencies: ['env'] },
);
