import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { callerOf } from '../../../plugins/app/auth/index.js';
import { errorResponses, WithHeaders } from '../../../schemas/common.js';
import { PackParams } from '../../../schemas/packs.js';
import {
  CancelPurchaseQuery,
  CompletedPurchaseResponse,
  CompletePurchaseBody,
  OpenPackBody,
  OpenResultResponse,
  PurchaseResponse,
} from '../../../schemas/purchases.js';

const REPLAYED = ['Idempotent-Replayed'];

/** Buying (start, complete, cancel) and opening packs: the fan's money-like changes. */
const purchaseRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { ttlMs, startsPerMinute } = app.config.purchases;
  // A crowd on one pack is served a batch at a time: one transaction, one hold of the pack's row lock.
  const starts = app.batchedChange({ maxBatch: 100, work: app.purchases.startBatch });
  const completes = app.batchedChange({ maxBatch: 100, work: app.purchases.completeBatch });

  app.post(
    '/:id/purchase',
    {
      config: { auth: 'user', idempotent: true },
      preHandler: app.perCallerLimit({
        name: 'purchase-start',
        max: startsPerMinute,
        windowMs: 60_000,
        what: 'purchases started',
      }),
      schema: {
        tags: ['Packs'],
        summary: 'Start a purchase: reserve one pack',
        description: [
          `Reserves one pack of an active pack for ${Math.round(ttlMs / 60_000)} minutes (PURCHASE_TTL) and publishes \`serverSeedHash\`, the SHA-256 of the secret seed the pack will be opened with. Complete it with PUT; until then it holds its pack, and once expired it counts for nothing.`,
          '',
          `- 409 \`sold_out\`: every pack the pool can fill is sold or reserved (or \`supply\` is reached).`,
          '- 409 `pack_not_on_sale`: the pack is archived.',
          '- 409 `purchase_limit_reached`: you hold `maxPerUser` pending or completed purchases of it.',
          `- 429: more than ${startsPerMinute} purchases started in a minute (PURCHASE_RATE_LIMIT), on top of the global limit.`,
        ].join('\n'),
        operationId: 'startPurchase',
        params: PackParams,
        response: {
          201: WithHeaders(PurchaseResponse, REPLAYED, 'The purchase, pending'),
          ...errorResponses(404, 409, 429),
        },
      },
    },
    async (request, reply) =>
      reply.sendOutcome(await starts.run(request, 201, request.params.id, { userId: callerOf(request).id })),
  );

  app.put(
    '/:id/purchase',
    {
      config: { auth: 'user', idempotent: true },
      schema: {
        tags: ['Packs'],
        summary: 'Complete a purchase: pay, and own the pack',
        description: [
          'Debits the price from your wallet and turns the reservation into an owned, unopened pack, in one transaction. Completing a completed purchase answers the same again.',
          '`clientSeed`, when given, is mixed into the draw when the pack is opened (unless the open names another).',
          '',
          '- 409 `insufficient_funds`: the wallet holds less than the price; the purchase stays pending.',
          '- 409 `purchase_expired` / `purchase_cancelled`: start a new purchase.',
          '- 409 `pack_not_on_sale`: the pack was archived meanwhile.',
        ].join('\n'),
        operationId: 'completePurchase',
        params: PackParams,
        body: Type.Ref(CompletePurchaseBody),
        response: {
          200: WithHeaders(CompletedPurchaseResponse, REPLAYED, 'The completed purchase and the owned pack'),
          ...errorResponses(404, 409),
        },
      },
    },
    async (request, reply) =>
      reply.sendOutcome(
        await completes.run(request, 200, request.params.id, { userId: callerOf(request).id, body: request.body }),
      ),
  );

  app.delete(
    '/:id/purchase',
    {
      config: { auth: 'user' },
      schema: {
        tags: ['Packs'],
        summary: 'Cancel a pending purchase',
        description:
          'Releases the reservation at once. Cancelling a cancelled purchase answers the same again; a completed one is 409 `purchase_completed`, an expired one 409 `purchase_expired`.',
        operationId: 'cancelPurchase',
        params: PackParams,
        querystring: CancelPurchaseQuery,
        response: { 200: PurchaseResponse, ...errorResponses(404, 409) },
      },
    },
    async (request, reply) =>
      reply.sendOutcome(
        await app.idempotentChange(request, 200, async (tx) => ({
          success: true as const,
          data: await app.purchases.cancel(tx, callerOf(request).id, request.params.id, request.query.purchaseId),
        })),
      ),
  );

  app.post(
    '/:id/open',
    {
      config: { auth: 'user', idempotent: true },
      // Every field is optional: a POST without a body means `{}`.
      preValidation: async (request) => {
        request.body ??= {};
      },
      schema: {
        tags: ['Packs'],
        summary: 'Open an owned pack',
        description: [
          "Draws `cardsPerPack` copies from the pool, gives each a serial number drawn at random among its entry's unminted serials, and adds the collectibles' points to your score. Without `userPackId`, opens your oldest unopened pack of this kind.",
          'Opening an opened pack answers its stored result again. `fairness` reveals the server seed (check it against the `serverSeedHash` of the purchase), the client seed, the pool before the first draw and every draw: `npm run verify-open -- <saved response>` recomputes it, and docs/fairness.md explains how.',
          'The client seed is the one given here, else the one given when completing, else a random one.',
          '',
          '- 404 `no_unopened_pack` (without `userPackId`), `user_pack_not_found` (a pack you do not own, or of another kind).',
        ].join('\n'),
        operationId: 'openPack',
        params: PackParams,
        body: Type.Ref(OpenPackBody),
        response: {
          200: WithHeaders(OpenResultResponse, REPLAYED, 'The pulls and their fairness proof'),
          ...errorResponses(404, 409),
        },
      },
    },
    async (request, reply) =>
      reply.sendOutcome(
        await app.opening.open(request, request.params.id, { userId: callerOf(request).id, body: request.body }),
      ),
  );
};

export default purchaseRoutes;
