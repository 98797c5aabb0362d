import { Type } from '@sinclair/typebox';
import { Order } from './checkout.js';
import { Envelope, StrictObject } from './common.js';

/** A JWS as Apple signs it: three base64url parts; a few kilobytes with its certificate chain. */
const Jws = (description: string) =>
  Type.String({
    minLength: 1,
    maxLength: 32_768,
    pattern: '^[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+$',
    description,
  });

export const ApplePurchaseBody = StrictObject(
  { signedTransaction: Jws("StoreKit 2's `Transaction.jwsRepresentation` of the purchase, as the app received it") },
  { $id: 'ApplePurchaseRequest' },
);

export const StorePurchase = Type.Object(
  {
    order: Type.Ref(Order),
    credited: Type.Boolean({
      description: 'true when this call credited the coins; false when the purchase was credited before',
    }),
  },
  { $id: 'StorePurchase', additionalProperties: false },
);
export const StorePurchaseResponse = Envelope(Type.Ref(StorePurchase));

export const AppleAccount = Type.Object(
  {
    appAccountToken: Type.String({
      format: 'uuid',
      maxLength: 36,
      description: 'Set this as the purchase option `appAccountToken` of every App Store purchase this user makes',
    }),
    consumptionDataConsent: Type.Boolean({
      description:
        'Whether the user agreed that, when they ask Apple for a refund, this service tells Apple how much of the coins they used (default false)',
    }),
  },
  { $id: 'AppleAccount', additionalProperties: false },
);
export const AppleAccountResponse = Envelope(Type.Ref(AppleAccount));
export const UpdateAppleAccountBody = StrictObject(
  { consumptionDataConsent: Type.Boolean() },
  { $id: 'UpdateAppleAccountRequest' },
);

/** What Apple posts (App Store Server Notifications v2). The route checks it by its signature. */
export const AppleNotificationBody = Type.Object(
  { signedPayload: Jws('The notification, signed by Apple (ES256, with its certificate chain in `x5c`)') },
  { additionalProperties: true, description: 'An App Store Server Notification v2, as Apple sends it' },
);
