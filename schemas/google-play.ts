import { Type } from '@sinclair/typebox';
import { Envelope, Nullable, StrictObject, StringEnum, Text } from './common.js';
import { Order } from './checkout.js';

/** Coins bought in the Android app: what the app sends, and what Pub/Sub pushes. */

export const GoogleCheckoutBody = StrictObject(
  {
    productId: Type.String({
      minLength: 1,
      maxLength: 150,
      pattern: '^[a-z0-9][a-z0-9_.]*$',
      description: 'The in-app product id in the Play Console (a bundle’s `googleProductId`)',
    }),
    purchaseToken: Type.String({
      minLength: 1,
      maxLength: 4096,
      // Not dots only: `.` and `..` are path segments that move the URL of Google's API.
      pattern: '^(?!\\.+$)[A-Za-z0-9._\\-:]+$',
      description: "The purchase's token, as Play Billing gave it to the app",
    }),
  },
  { examples: [{ productId: 'coins_1000', purchaseToken: 'opaque-token-up-to-4096-characters' }] },
);

export const GoogleCheckoutOutcome = Type.Object(
  {
    status: StringEnum(['credited', 'already_credited', 'pending'] as const, {
      description:
        '`credited`: the coins are in the wallet now; `already_credited`: this purchase was credited before (nothing more); `pending`: Google has not been paid yet (a pending payment method): nothing is credited, send it again once Play Billing reports it purchased',
    }),
    order: Nullable(Type.Ref(Order)),
    consumed: Type.Boolean({
      description:
        'Whether the purchase is consumed at Google (the app may sell the product again); false: a job tries again, well within Google’s three days',
    }),
  },
  { additionalProperties: false },
);
export const GoogleCheckoutResponse = Envelope(GoogleCheckoutOutcome);

/**
 * What Pub/Sub pushes: one message whose `data` is a base64 DeveloperNotification. Documents the
 * request; the route reads the raw body only once the push's OIDC token is verified.
 */
export const PubSubPushBody = Type.Object(
  {
    message: Type.Object(
      {
        data: Text(65_536, { description: 'Base64 of the DeveloperNotification JSON' }),
        messageId: Text(200, { description: 'Each message is handled once' }),
        publishTime: Type.Optional(Text(40)),
        attributes: Type.Optional(Type.Object({}, { additionalProperties: Text(1024) })),
      },
      { additionalProperties: true },
    ),
    subscription: Type.Optional(Text(512)),
  },
  { additionalProperties: true, description: 'A Pub/Sub push request (wrapped format)' },
);
