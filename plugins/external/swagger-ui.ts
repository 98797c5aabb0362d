import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import fastifySwaggerUi from '@fastify/swagger-ui';
import type { FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';

/**
 * Swagger UI at /docs (the document at /docs/json), and GET / redirecting there; DOCS_ENABLED=false
 * turns all three off. The pages carry Swagger UI's own content-security policy (hashes of its
 * inline code) instead of the API's strict one, which would break them. Its
 * `upgrade-insecure-requests` directive is sent only when the page is served over https: over
 * plain http (a local or internal address) the browser would fetch the page's scripts from an
 * https origin that does not exist, and show a blank page.
 */

const UPGRADE = /\s*upgrade-insecure-requests;?/;

const STYLE_ELEMENT = 'createElement("style",null,';
/** A JavaScript string literal in double quotes, read where a <style> element is created. */
const STRING_LITERAL = /"(?:[^"\\]|\\.)*"/y;
let inlineStyleHashes: string[] | undefined;

/**
 * The hashes (`'sha256-...'`) of the <style> elements Swagger UI's own scripts create (its logo
 * carries one), read once per process from the installed scripts so that an upgrade keeps them
 * right: the page's policy allows exactly these inline styles and no other.
 */
export function swaggerUiInlineStyleHashes(): string[] {
  if (inlineStyleHashes) return inlineStyleHashes;
  const staticDir = join(dirname(createRequire(import.meta.url).resolve('@fastify/swagger-ui/package.json')), 'static');
  const hashes = new Set<string>();
  for (const file of ['swagger-ui-bundle.js', 'swagger-ui-standalone-preset.js']) {
    const code = readFileSync(join(staticDir, file), 'utf8');
    for (let at = code.indexOf(STYLE_ELEMENT); at !== -1; at = code.indexOf(STYLE_ELEMENT, at + 1)) {
      STRING_LITERAL.lastIndex = at + STYLE_ELEMENT.length;
      const literal = STRING_LITERAL.exec(code)?.[0];
      if (literal)
        hashes.add(
          `'sha256-${createHash('sha256')
            .update(JSON.parse(literal) as string, 'utf8')
            .digest('base64')}'`,
        );
    }
  }
  inlineStyleHashes = [...hashes];
  return inlineStyleHashes;
}

/** Swagger UI's static policy (which has a style-src), with its own inline styles allowed by hash and without upgrade-insecure-requests. */
export function docsPolicy(csp: string, styleHashes: readonly string[]): string {
  const policy = csp.replace(UPGRADE, '');
  if (styleHashes.length === 0) return policy;
  return policy.replace(
    /style-src([^;]*)/,
    (_match, sources: string) => `style-src ${sources.trim()} ${styleHashes.join(' ')}`,
  );
}

function upgradeOverHttps(
  request: FastifyRequest,
  reply: FastifyReply,
  payload: unknown,
  done: (error: null, payload: unknown) => void,
) {
  const csp = reply.getHeader('content-security-policy');
  if (request.protocol === 'https' && typeof csp === 'string' && !UPGRADE.test(csp)) {
    reply.header('content-security-policy', `${csp} upgrade-insecure-requests;`);
  }
  done(null, payload);
}

/** The pages keep every security header but the API's content-security policy, which would break them. */
function withoutApiPolicy(_request: FastifyRequest, reply: FastifyReply, done: () => void) {
  reply.removeHeader('content-security-policy');
  done();
}

export default fp(
  async (fastify) => {
    if (!fastify.config.docsEnabled) return;
    const styleHashes = swaggerUiInlineStyleHashes();
    await fastify.register(async (docs) => {
      docs.addHook('onRoute', (route) => {
        route.config = { ...route.config, auth: 'public' };
        // Route-level: after the API's security headers (a global hook), before Swagger UI's own policy.
        route.onRequest = [...(route.onRequest ? [route.onRequest].flat() : []), withoutApiPolicy];
        // Route-level: runs after Swagger UI's own hook has set the policy.
        route.onSend = [...(route.onSend ? [route.onSend].flat() : []), upgradeOverHttps];
      });
      await docs.register(fastifySwaggerUi, {
        routePrefix: '/docs',
        staticCSP: true,
        transformStaticCSP: (csp) => docsPolicy(csp, styleHashes),
        uiConfig: { persistAuthorization: true, deepLinking: true, displayRequestDuration: true },
      });
    });
    fastify.get('/', { config: { auth: 'public' }, schema: { hide: true } }, (_request, reply) =>
      reply.redirect('/docs'),
    );
  },
  { name: 'swagger-ui', dependencies: ['env', 'swagger', 'helmet'] },
);
