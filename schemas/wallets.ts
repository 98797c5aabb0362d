import { type Static, Type } from '@sinclair/typebox';
import { Envelope, Id, Int, Nullable, Page, PageQuery, StrictObject, Text, Timestamp, trimmed } from './common.js';
import { LedgerKind } from './enums.js';

/** The largest single adjustment: far above any real grant, far below overflowing a balance. */
export const MAX_ADJUSTMENT = 1_000_000_000;

export const Wallet = Type.Object(
  {
    balance: Int({ description: 'Integer coins, never below 0', examples: [1200] }),
    currency: Type.Literal('coins'),
  },
  { $id: 'Wallet', additionalProperties: false },
);
export type Wallet = Static<typeof Wallet>;

export const LedgerEntry = Type.Object(
  {
    id: Id,
    amount: Type.Integer({
      format: 'int32',
      minimum: -2_147_483_647,
      maximum: 2_147_483_647,
      description: 'Signed: credits are positive, debits negative',
      examples: [-300],
    }),
    balanceAfter: Int({ description: 'The balance once this entry applied', examples: [900] }),
    kind: Type.Ref(LedgerKind),
    reference: Nullable(Text(128, { description: 'What caused the entry: for `purchase`, the purchase id' })),
    reason: Nullable(Text(500, { description: 'Why, for an adjustment' })),
    createdAt: Timestamp,
  },
  { $id: 'LedgerEntry', additionalProperties: false },
);
export type LedgerEntry = Static<typeof LedgerEntry>;

export const WalletResponse = Envelope(Type.Ref(Wallet));
export const LedgerPage = Page(Type.Ref(LedgerEntry));
export const LedgerQuery = PageQuery({});
export type LedgerQuery = Static<typeof LedgerQuery>;

export const WalletAdjustmentBody = StrictObject(
  {
    amount: Type.Integer({
      format: 'int32',
      minimum: -MAX_ADJUSTMENT,
      maximum: MAX_ADJUSTMENT,
      not: { const: 0 },
      description: 'Coins to add (positive) or take (negative); not 0',
      examples: [500],
    }),
    reason: trimmed(
      Text(500, {
        minLength: 1,
        pattern: '\\S',
        description: 'Why: kept in the ledger (stored trimmed)',
        examples: ['Compensation for the outage of 2026-11-20'],
      }),
    ),
  },
  { $id: 'WalletAdjustmentBody' },
);
export type WalletAdjustmentBody = Static<typeof WalletAdjustmentBody>;

export const LedgerEntryResponse = Envelope(Type.Ref(LedgerEntry));
export const WalletUserParams = Type.Object(
  { userId: Type.String({ minLength: 1, maxLength: 255, description: 'The user (the identity provider subject)' }) },
  { additionalProperties: false },
);
