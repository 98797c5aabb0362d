import { type Static, Type } from '@sinclair/typebox';
import { Description, Envelope, Id, Int, Name, Nullable, StrictObject, Timestamp } from './common.js';

/** The most coins one bundle grants (coins + bonus): far above any real bundle, far below a wallet's limit. */
export const MAX_BUNDLE_COINS = 100_000_000;
/** Stripe's largest amount: 8 digits of minor units. */
export const MAX_UNIT_AMOUNT = 99_999_999;

const Coins = (description: string, minimum: number) => Int({ minimum, maximum: MAX_BUNDLE_COINS, description });
const Currency = Type.String({
  pattern: '^[a-z]{3}$',
  minLength: 3,
  maxLength: 3,
  description: 'ISO 4217, lowercase',
  examples: ['usd', 'eur'],
});
const UnitAmount = Int({
  minimum: 1,
  maximum: MAX_UNIT_AMOUNT,
  description: 'In minor units (cents): 499 is 4.99',
  examples: [499],
});
const StoreSku = (store: string, example: string) =>
  Type.String({
    pattern: '^[A-Za-z0-9][A-Za-z0-9._-]*$',
    minLength: 1,
    maxLength: 150,
    description: `The bundle's product id in ${store} (unset: not sold there); unique`,
    examples: [example],
  });
const AppleSku = StoreSku('the App Store', 'com.example.coins.1000');
const GoogleSku = StoreSku('Google Play', 'coins_1000');
const SortOrder = Int({ minimum: 0, maximum: 1_000_000, description: 'Lower first in the public list' });

export const Price = Type.Object(
  {
    id: Id,
    productId: Id,
    currency: Currency,
    unitAmount: UnitAmount,
    active: Type.Boolean({ description: 'Only active prices can be bought; at most one per product and currency' }),
    createdAt: Timestamp,
  },
  {
    $id: 'Price',
    additionalProperties: false,
    description: 'What a product costs in one currency; amount and currency never change',
  },
);
export type Price = Static<typeof Price>;

export const Product = Type.Object(
  {
    id: Id,
    name: Name(100, ['1,000 coins']),
    description: Nullable(Description(['A handful of packs'])),
    coins: Coins('Coins the bundle grants', 1),
    bonusCoins: Coins('Extra coins on top', 0),
    active: Type.Boolean({ description: 'Inactive products are not listed or sold' }),
    sortOrder: SortOrder,
    appleProductId: Nullable(AppleSku),
    googleProductId: Nullable(GoogleSku),
    prices: Type.Array(Type.Ref(Price), {
      maxItems: 500,
      description:
        'Public list: the active prices (a bundle sold only in the stores has none); admin answers: every price, newest first',
    }),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { $id: 'Product', additionalProperties: false, description: 'A coin bundle' },
);
export type Product = Static<typeof Product>;

export const ProductResponse = Envelope(Type.Ref(Product));
export const ProductListResponse = Envelope(Type.Array(Type.Ref(Product), { maxItems: 500 }));
export const PriceResponse = Envelope(Type.Ref(Price));

export const CreateProductBody = StrictObject(
  {
    name: Name(100, ['1,000 coins']),
    description: Type.Optional(Nullable(Description(['A handful of packs']))),
    coins: Coins('Coins the bundle grants', 1),
    bonusCoins: Type.Optional(Coins('Extra coins on top (default 0)', 0)),
    active: Type.Optional(Type.Boolean({ description: 'Default true' })),
    sortOrder: Type.Optional(SortOrder),
    appleProductId: Type.Optional(Nullable(AppleSku)),
    googleProductId: Type.Optional(Nullable(GoogleSku)),
  },
  { $id: 'CreateProductRequest', examples: [{ name: '1,000 coins', coins: 1000, bonusCoins: 100, sortOrder: 10 }] },
);
export type CreateProductBody = Static<typeof CreateProductBody>;

export const UpdateProductBody = StrictObject(
  {
    name: Type.Optional(Name(100, ['1,000 coins'])),
    description: Type.Optional(Nullable(Description(['A handful of packs']))),
    coins: Type.Optional(Coins('Coins the bundle grants (orders already made keep theirs)', 1)),
    bonusCoins: Type.Optional(Coins('Extra coins on top', 0)),
    active: Type.Optional(Type.Boolean()),
    sortOrder: Type.Optional(SortOrder),
    appleProductId: Type.Optional(Nullable(AppleSku)),
    googleProductId: Type.Optional(Nullable(GoogleSku)),
  },
  { $id: 'UpdateProductRequest', minProperties: 1 },
);
export type UpdateProductBody = Static<typeof UpdateProductBody>;

export const CreatePriceBody = StrictObject(
  { currency: Currency, unitAmount: UnitAmount },
  { $id: 'CreatePriceRequest', examples: [{ currency: 'usd', unitAmount: 499 }] },
);
export type CreatePriceBody = Static<typeof CreatePriceBody>;

export const UpdatePriceBody = StrictObject(
  { active: Type.Boolean({ description: "A price's only editable field" }) },
  { $id: 'UpdatePriceRequest' },
);
export type UpdatePriceBody = Static<typeof UpdatePriceBody>;

export const ProductParams = Type.Object({ id: Id }, { additionalProperties: false });
