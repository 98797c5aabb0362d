import { type Static, Type } from '@sinclair/typebox';
import { Envelope, Id, Int, Nullable, Page, PageQuery, StrictObject, Text, Timestamp } from './common.js';
import { OrderStatus } from './enums.js';

export const CreateCheckoutBody = StrictObject({ priceId: Id }, { $id: 'CreateCheckoutRequest', examples: [{ priceId: '3f0c1d52-0000-4000-8000-000000000001' }] });
export type CreateCheckoutBody = Static<typeof CreateCheckoutBody>;

export const CheckoutSession = Type.Object(
  {
    orderId: Id,
    url: Text(2048, { description: "Stripe Checkout's page: send the buyer there" }),
    expiresAt: Timestamp,
  },
  { $id: 'CheckoutSession', additionalProperties: false },
);
export const CheckoutSessionResponse = Envelope(Type.Ref(CheckoutSession));

export const Order = Type.Object(
  {
    id: Id,
    productId: Id,
    priceId: Id,
    coins: Int({ description: 'What the order grants, as the bundle stood when it was made' }),
    amount: Int({ description: 'In minor units of `currency`' }),
    currency: Text(3),
    status: Type.Ref(OrderStatus),
    provider: Type.Literal('stripe'),
    checkoutUrl: Nullable(Text(2048)),
    failureReason: Nullable(Text(500)),
    expiresAt: Timestamp,
    createdAt: Timestamp,
    fulfilledAt: Nullable(Timestamp),
  },
  { $id: 'Order', additionalProperties: false },
);
export type Order = Static<typeof Order>;

export const AdminOrder = Type.Object(
  {
    ...Order.properties,
    userId: Id,
    amountRefunded: Int({ description: 'Of `amount`, refunded so far' }),
    coinsReversed: Int({ description: 'Coins the refunds reversed' }),
    uncollected: Int({ description: 'Of those, the coins the balance could not give back' }),
  },
  { $id: 'AdminOrder', additionalProperties: false },
);
export type AdminOrder = Static<typeof AdminOrder>;
export const AdminOrderPage = Page(Type.Ref(AdminOrder));
export const AdminOrderQuery = PageQuery({
  uncollected: Type.Optional(Type.Boolean({ description: 'Only orders whose refunds left coins uncollected' })),
});

export const OrderResponse = Envelope(Type.Ref(Order));
export const OrderPage = Page(Type.Ref(Order));
export const OrderQuery = PageQuery({});
export type OrderQuery = Static<typeof OrderQuery>;
export const OrderParams = Type.Object({ id: Id }, { additionalProperties: false });

export const WebhookAck = Type.Object({ received: Type.Literal(true) }, { additionalProperties: false });
