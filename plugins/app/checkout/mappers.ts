import type { OrderRow } from '../../../db/schema.js';
import type { AdminOrder, Order } from '../../../schemas/checkout.js';

/** Orders as the API shows them: to their buyer, and to platform admins. */

export function toOrder(row: OrderRow): Order {
  return {
    id: row.id,
    productId: row.productId,
    priceId: row.priceId,
    coins: row.coins,
    amount: row.amount,
    currency: row.currency,
    status: row.status,
    provider: row.provider,
    checkoutUrl: row.status === 'pending' ? row.checkoutUrl : null,
    failureReason: row.failureReason,
    expiresAt: row.expiresAt?.toISOString() ?? null,
    createdAt: row.createdAt.toISOString(),
    fulfilledAt: row.fulfilledAt?.toISOString() ?? null,
  };
}

export function toAdminOrder(row: OrderRow): AdminOrder {
  return {
    ...toOrder(row),
    userId: row.userId,
    paymentIntent: row.paymentIntent,
    amountRefunded: row.amountRefunded,
    coinsReversed: row.coinsReversed,
    uncollected: row.uncollected,
    needsReview: row.needsReview,
    reviewReason: row.reviewReason,
  };
}
