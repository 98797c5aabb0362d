import { createHash } from 'node:crypto';

/** Pure rules of App Store purchases: what a verified transaction must be to credit coins. */

/** ISO 4217 currencies whose minor unit is not the cent. Every other has two decimals. */
const EXPONENTS: Readonly<Record<string, number>> = {
  BIF: 0,
  CLP: 0,
  DJF: 0,
  GNF: 0,
  ISK: 0,
  JPY: 0,
  KMF: 0,
  KRW: 0,
  PYG: 0,
  RWF: 0,
  UGX: 0,
  UYI: 0,
  VND: 0,
  VUV: 0,
  XAF: 0,
  XOF: 0,
  XPF: 0,
  BHD: 3,
  IQD: 3,
  JOD: 3,
  KWD: 3,
  LYD: 3,
  OMR: 3,
  TND: 3,
};

/** The number of decimals of a currency's minor unit (ISO 4217). */
export const currencyExponent = (currency: string): number => EXPONENTS[currency.toUpperCase()] ?? 2;

/**
 * What Apple says was paid, as the order keeps it: Apple's `price` is in milli-units of `currency`
 * (4.99 USD is 4990), converted to the currency's minor units (499 cents; 160 JPY stays 160), times
 * the quantity bought. Null when Apple does not say, or says nothing positive (a free offer).
 */
export function appleAmount(
  price: number | undefined,
  currency: string | undefined,
  quantity: number,
): { amount: number; currency: string } | null {
  if (price === undefined || !currency || !/^[A-Za-z]{3}$/.test(currency) || !Number.isSafeInteger(price)) return null;
  const minor = Math.round((price * 10 ** currencyExponent(currency)) / 1000) * quantity;
  if (!Number.isSafeInteger(minor) || minor <= 0 || minor > 2_147_483_647) return null;
  return { amount: minor, currency: currency.toLowerCase() };
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** The namespace of account tokens made from user ids that are not UUIDs (a UUID of our own, fixed forever). */
const ACCOUNT_NAMESPACE = Buffer.from('6f1d8a3e2b7c4e59a0d41c2e9b3f7a65', 'hex');

/**
 * The `appAccountToken` the app sets on a purchase for this user. StoreKit takes only a UUID: a
 * user id that is one is its own token; any other is mapped to a name-based UUID (RFC 9562
 * version 5, SHA-1, in this service's namespace), stable for the user.
 */
export function appAccountToken(userId: string): string {
  if (UUID.test(userId)) return userId.toLowerCase();
  const hash = createHash('sha1').update(ACCOUNT_NAMESPACE).update(userId, 'utf8').digest();
  hash[6] = ((hash[6] as number) & 0x0f) | 0x50;
  hash[8] = ((hash[8] as number) & 0x3f) | 0x80;
  const hex = hash.subarray(0, 16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** What the purchase route reads of a verified transaction. */
export interface AppleTransaction {
  transactionId?: string;
  productId?: string;
  type?: string;
  appAccountToken?: string;
  revocationDate?: number;
  quantity?: number;
}

export type PurchaseProblem =
  | { status: 400; code: 'invalid_signed_data'; message: string }
  | { status: 403; code: 'store_account_mismatch'; message: string }
  | { status: 409; code: 'store_purchase_not_consumable' | 'store_purchase_revoked'; message: string };

/**
 * Why a verified transaction cannot credit this caller, if it cannot: it must name a transaction
 * and a product in a quantity we can credit, be a consumable, carry the caller's account token (so a transaction read off one
 * device cannot be redeemed by another account), and not have been refunded or revoked.
 */
export function purchaseProblem(transaction: AppleTransaction, userId: string): PurchaseProblem | undefined {
  if (!transaction.transactionId || !transaction.productId)
    return { status: 400, code: 'invalid_signed_data', message: 'The transaction names no transaction or product.' };
  // Crediting one bundle for a transaction of several would shortchange the fan: refused, for support.
  if (!validQuantity(transaction.quantity))
    return {
      status: 400,
      code: 'invalid_signed_data',
      message: `The transaction's quantity is not a whole number from 1 to ${MAX_QUANTITY}.`,
    };
  if (transaction.type !== 'Consumable')
    return {
      status: 409,
      code: 'store_purchase_not_consumable',
      message: 'Only consumable in-app purchases (coin bundles) are credited.',
    };
  if (transaction.appAccountToken?.toLowerCase() !== appAccountToken(userId))
    return {
      status: 403,
      code: 'store_account_mismatch',
      message: "The purchase was not made for this account: its appAccountToken is not the caller's.",
    };
  if (transaction.revocationDate !== undefined)
    return { status: 409, code: 'store_purchase_revoked', message: 'Apple refunded or revoked this purchase.' };
  return undefined;
}

/** The most bundles one transaction may carry (StoreKit sells at most 10 at once). */
const MAX_QUANTITY = 100;

const validQuantity = (quantity: number | undefined) =>
  quantity === undefined || (Number.isSafeInteger(quantity) && quantity >= 1 && quantity <= MAX_QUANTITY);

/** How many bundles one transaction grants (a consumable may be bought several at once); checked by purchaseProblem. */
export function purchaseQuantity(transaction: AppleTransaction): number {
  return transaction.quantity ?? 1;
}

/**
 * How much of an order's coins a fan has used, as Apple's consumption information asks it (in
 * thousandths of a percent, 0 to 100,000): coins not in the wallet any more count as used.
 */
export function consumptionPercentage(orderCoins: number, balance: number): number {
  if (orderCoins <= 0) return 0;
  const used = Math.min(orderCoins, Math.max(0, orderCoins - balance));
  return Math.round((used * 100_000) / orderCoins);
}

/**
 * What to tell Apple about an order it asks a refund's consumption for, or null to say nothing: a
 * refunded order is settled already; a failed one never gave its coins (undelivered, nothing used).
 */
export function consumptionAnswer(
  order: { status: string; coins: number },
  balance: number,
): { deliveryStatus: 'DELIVERED' | 'UNDELIVERED_OTHER'; consumptionPercentage: number } | null {
  if (order.status === 'failed') return { deliveryStatus: 'UNDELIVERED_OTHER', consumptionPercentage: 0 };
  if (order.status !== 'fulfilled') return null;
  return { deliveryStatus: 'DELIVERED', consumptionPercentage: consumptionPercentage(order.coins, balance) };
}

/** What a notification does to an order. */
export type NotificationAction = 'reverse' | 'restore' | 'consumption' | 'none';

export function notificationAction(type: string | undefined): NotificationAction {
  switch (type) {
    case 'REFUND':
    case 'REVOKE':
      return 'reverse';
    case 'REFUND_REVERSED':
      return 'restore';
    case 'CONSUMPTION_REQUEST':
      return 'consumption';
    default:
      return 'none';
  }
}

/** The recovery job reads the history from a little before where it stopped: Apple indexes it by first send attempt. */
export const HISTORY_OVERLAP_MS = 10 * 60_000;
/** A first run reads the last day. */
export const HISTORY_FIRST_WINDOW_MS = 24 * 3_600_000;
/** Apple keeps 180 days of history; a start before that is refused. */
export const HISTORY_MAX_WINDOW_MS = 179 * 24 * 3_600_000;

/** The history is read at most this often (the job runs every minute). */
export const HISTORY_INTERVAL_MS = 10 * 60_000;

/** How far the notification history has been read. */
export interface HistoryProgress {
  /** Where the last window read whole ended; null: none yet. */
  readUntil: Date | null;
  /** When a run last asked Apple, whether it went well or not. */
  attemptedAt: Date | null;
  /** A window too long for one run, and the page to go on from. */
  resume: { start: Date; end: Date; token: string } | null;
}

/**
 * Whether a run reads the history now: a first run does, and one going on with a long window;
 * otherwise once the interval has passed since the last run that asked Apple (a failing run too,
 * so an outage is not asked every minute).
 */
export function historyDue(progress: HistoryProgress | null, now: Date): boolean {
  if (!progress?.attemptedAt || progress.resume) return true;
  return now.getTime() - progress.attemptedAt.getTime() >= HISTORY_INTERVAL_MS;
}

/** The window the next history read covers. */
export function historyWindow(readUntil: Date | null, now: Date): { start: Date; end: Date } {
  const earliest = now.getTime() - HISTORY_MAX_WINDOW_MS;
  const from = readUntil ? readUntil.getTime() - HISTORY_OVERLAP_MS : now.getTime() - HISTORY_FIRST_WINDOW_MS;
  return { start: new Date(Math.max(earliest, from)), end: now };
}
