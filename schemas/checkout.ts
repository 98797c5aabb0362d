import { type Static, type TSchema, Type } from '@sinclair/typebox';
import {
  Envelope,
  Id,
  Int,
  Nullable,
  NullableString,
  Page,
  PageQuery,
  StrictObject,
  Text,
  Timestamp,
} from './common.js';
import { OrderProvider, OrderReviewReason, OrderStatus } from './enums.js';

export const CreateCheckoutBody = StrictObject(
  { priceId: Id },
  { $id: 'CreateCheckoutRequest', examples: [{ priceId: '3f0c1d52-0000-4000-8000-000000000001' }] },
);
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
    priceId: Type.Union([Id, Type.Null()], { description: 'The Stripe price it was made at; null for store orders' }),
    coins: Int({ description: 'What the order grants, as the bundle stood when it was made' }),
    amount: Nullable(
      Int({
        description: 'What was paid, in minor units of `currency`; null when the store does not say (Google Play)',
      }),
    ),
    currency: Nullable(Text(3)),
    status: Type.Ref(OrderStatus),
    provider: Type.Ref(OrderProvider),
    checkoutUrl: Nullable(Text(2048)),
    failureReason: Nullable(Text(500)),
    expiresAt: Type.Union([Timestamp, Type.Null()], {
      description: 'Until when a Stripe order waits for payment; null for store orders',
    }),
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
    paymentIntent: NullableString(255, { description: "Stripe's PaymentIntent of the payment, once paid" }),
    amountRefunded: Int({ description: 'Of `amount`, refunded so far' }),
    coinsReversed: Int({ description: 'Coins the refunds and disputes reversed' }),
    uncollected: Int({ description: 'Of those, the coins the balance could not give back' }),
    needsReview: Type.Boolean({
      description:
        'Paid but not credited as usual, or a won dispute could not return every coin: see `reviewReason`. Refund the payment in Stripe (a full refund clears the flag), or credit the order (`POST /api/admin/orders/{id}/credit`), or clear the flag by hand',
    }),
    reviewReason: Nullable(Type.Ref(OrderReviewReason)),
  },
  { $id: 'AdminOrder', additionalProperties: false },
);
export type AdminOrder = Static<typeof AdminOrder>;
export const AdminOrderPage = Page(Type.Ref(AdminOrder));
export const AdminOrderQuery = PageQuery({
  uncollected: Type.Optional(Type.Boolean({ description: 'Only orders whose refunds left coins uncollected' })),
  needsReview: Type.Optional(
    Type.Boolean({ description: 'Only paid orders waiting for a platform admin to review them' }),
  ),
});

export const AdminOrderResponse = Envelope(Type.Ref(AdminOrder));
export const UpdateOrderBody = StrictObject(
  { needsReview: Type.Boolean({ description: 'false once the order was refunded in Stripe or credited by hand' }) },
  { $id: 'UpdateOrderRequest' },
);

export const OrderResponse = Envelope(Type.Ref(Order));
export const OrderPage = Page(Type.Ref(Order));
export const OrderQuery = PageQuery({});
export type OrderQuery = Static<typeof OrderQuery>;
export const OrderParams = Type.Object({ id: Id }, { additionalProperties: false });

export const WebhookAck = Type.Object({ received: Type.Literal(true) }, { additionalProperties: false });

/**
 * What Stripe posts: an event, signed over its raw bytes. Documents the request for clients and
 * validating proxies; the route checks the body by its signature, not by this schema, since
 * Stripe adds fields to its events at will.
 */
export const StripeEventBody = Type.Object(
  {
    id: Type.String({ maxLength: 255, description: 'The event id (`evt_...`): each is handled once' }),
    object: Type.Literal('event'),
    type: Type.String({ maxLength: 255, description: 'e.g. `checkout.session.completed`, `charge.refunded`' }),
    created: Type.Integer({
      format: 'int64',
      minimum: 0,
      maximum: Number.MAX_SAFE_INTEGER,
      description: 'Unix time, in seconds',
    }),
    livemode: Type.Boolean(),
    data: Type.Object({ object: Type.Object({}, { additionalProperties: true }) }, { additionalProperties: true }),
  },
  {
    additionalProperties: true,
    description: 'A Stripe event as Stripe sends it, unchanged: the Stripe-Signature header covers these exact bytes',
  },
);
export type StripeEvent = Static<typeof StripeEventBody>;

// The Stripe objects the webhook reads, trimmed to the fields read: Stripe adds others at will, and
// they pass. Not part of the API document: an event's object is checked against its type's schema
// once the signature is verified, so the handlers read it typed. A field Stripe may leave null (or
// an older event may lack) is optional and nullable, as the handlers always took it.

const StripeId = Type.String({ maxLength: 255 });
/** A PaymentIntent, by id or expanded. */
const PaymentIntentRef = Type.Optional(Nullable(Type.Union([StripeId, Type.Object({ id: StripeId })])));
const OptionalNullable = <T extends TSchema>(schema: T) => Type.Optional(Nullable(schema));

/** A Checkout Session (`checkout.session.*` events, and the sessions the service reads back). */
export const StripeCheckoutSession = Type.Object({
  id: StripeId,
  /** The order id, as the service made the session. */
  client_reference_id: OptionalNullable(Type.String()),
  metadata: OptionalNullable(Type.Object({ orderId: Type.Optional(Type.String()) })),
  status: OptionalNullable(Type.String()),
  payment_status: OptionalNullable(Type.String()),
  amount_total: OptionalNullable(Type.Integer()),
  currency: OptionalNullable(Type.String()),
  payment_intent: PaymentIntentRef,
});
export type StripeCheckoutSession = Static<typeof StripeCheckoutSession>;

/** A charge (`charge.refunded`): `amount_refunded` is the total refunded so far. */
export const StripeCharge = Type.Object({
  id: StripeId,
  amount: Type.Integer(),
  amount_refunded: Type.Integer(),
  refunded: OptionalNullable(Type.Boolean()),
  payment_intent: PaymentIntentRef,
});
export type StripeCharge = Static<typeof StripeCharge>;

/** A dispute (`charge.dispute.*`). */
export const StripeDispute = Type.Object({
  id: StripeId,
  status: Type.String(),
  payment_intent: PaymentIntentRef,
});
export type StripeDispute = Static<typeof StripeDispute>;
