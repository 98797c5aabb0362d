import type { TSchema } from '@sinclair/typebox';
import type { preHandlerHookHandler } from 'fastify';
import fp from 'fastify-plugin';
import { FreeText } from '../../schemas/common.js';
import { SHARED_SCHEMAS } from '../../schemas/index.js';

/**
 * The one rule for free text people type (the names of packs, collectibles, teams and products):
 * white space at either end is dropped before the value is stored. The schemas mark such fields
 * (`trimmed`, `Name` in schemas/common.ts); every route whose body has one trims it here, after
 * validation (so what is refused stays refused as before), before its handler runs.
 */

/** The string with no white space at either end: the rule itself. */
export const cleanFreeText = (value: string): string => value.trim();

/** The top-level fields of a body schema (or of the shared schema it refers to) marked as free text. */
export function freeTextFields(body: unknown, shared: readonly TSchema[] = SHARED_SCHEMAS): string[] {
  const ref = (body as { $ref?: unknown } | undefined)?.$ref;
  const schema = typeof ref === 'string' ? shared.find((candidate) => candidate.$id === ref) : body;
  const properties = (schema as { properties?: Record<string, unknown> } | undefined)?.properties ?? {};
  return Object.entries(properties)
    .filter(([, property]) => (property as { [FreeText]?: boolean })?.[FreeText] === true)
    .map(([name]) => name);
}

export default fp(
  async (fastify) => {
    fastify.addHook('onRoute', (route) => {
      const fields = freeTextFields(route.schema?.body);
      if (fields.length === 0) return;
      const trim: preHandlerHookHandler = (request, _reply, done) => {
        const body = request.body as Record<string, unknown> | null;
        for (const field of fields) {
          const value = body?.[field];
          if (typeof value === 'string') (body as Record<string, unknown>)[field] = cleanFreeText(value);
        }
        done();
      };
      const existing = route.preHandler;
      route.preHandler = [trim, ...(existing === undefined ? [] : Array.isArray(existing) ? existing : [existing])];
    });
  },
  { name: 'free-text' },
);
