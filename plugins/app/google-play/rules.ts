import { createHash } from 'node:crypto';

/**
 * Pure rules of Google Play purchases: reading what the Android Publisher API and Pub/Sub send,
 * deciding what a purchase grants, and when a failed consume is tried again.
 */

/** `purchases.products` (ProductPurchase), the fields this service reads, as Google's v3 reference defines them. */
export interface ProductPurchase {
  /** 0 purchased, 1 canceled, 2 pending. */
  purchaseState: number;
  /** 0 yet to be consumed, 1 consumed. */
  consumptionState: number;
  /** Milliseconds since the epoch. */
  purchaseTimeMillis: number;
  /** Google's order id (`GPA.…`); absent for some test purchases. */
  orderId: string | null;
  /** The in-app product's SKU, when Google names it. */
  productId: string | null;
  /** What the app set at purchase: this service's user id. */
  obfuscatedExternalAccountId: string | null;
  /** 1 unless multi-quantity purchases are on for the product. */
  quantity: number;
  /** 0 test (license testing), 1 promo, 2 rewarded; absent for a real purchase. */
  purchaseType: number | null;
}

/** `voidedpurchases` (VoidedPurchase): a purchase that was refunded, charged back or revoked. */
export interface VoidedPurchase {
  purchaseToken: string;
  orderId: string | null;
  voidedTimeMillis: number;
  /** 0 user, 1 developer, 2 Google. */
  voidedSource: number | null;
  voidedReason: number | null;
}

export const PURCHASE_STATE = { purchased: 0, canceled: 1, pending: 2 } as const;
export const CONSUMPTION_STATE = { consumed: 1 } as const;

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const text = (value: unknown): string | null => (typeof value === 'string' && value !== '' ? value : null);
/** Google sends int64 values as decimal strings. */
function int(value: unknown): number | null {
  if (typeof value === 'number' && Number.isSafeInteger(value)) return value;
  if (typeof value === 'string' && /^-?\d{1,16}$/.test(value)) return Number(value);
  return null;
}

/** A ProductPurchase as Google answers it; undefined when it lacks what every purchase carries. */
export function readProductPurchase(body: unknown): ProductPurchase | undefined {
  if (!isRecord(body)) return undefined;
  // Google always gives the state: an answer without a known one is unreadable, never taken as purchased.
  const purchaseState = int(body.purchaseState);
  if (purchaseState === null || !Object.values(PURCHASE_STATE).some((state) => state === purchaseState))
    return undefined;
  // Absent means one; a quantity that is not a whole number is unreadable, never taken as one.
  const quantity = body.quantity === undefined ? 1 : int(body.quantity);
  const purchaseTimeMillis = int(body.purchaseTimeMillis);
  if (purchaseTimeMillis === null || quantity === null) return undefined;
  return {
    purchaseState,
    consumptionState: int(body.consumptionState) ?? 0,
    purchaseTimeMillis,
    orderId: text(body.orderId),
    productId: text(body.productId),
    obfuscatedExternalAccountId: text(body.obfuscatedExternalAccountId),
    quantity,
    purchaseType: int(body.purchaseType),
  };
}

export function readVoidedPurchase(body: unknown): VoidedPurchase | undefined {
  if (!isRecord(body)) return undefined;
  const purchaseToken = text(body.purchaseToken);
  const voidedTimeMillis = int(body.voidedTimeMillis);
  if (!purchaseToken || voidedTimeMillis === null) return undefined;
  return {
    purchaseToken,
    orderId: text(body.orderId),
    voidedTimeMillis,
    voidedSource: int(body.voidedSource),
    voidedReason: int(body.voidedReason),
  };
}

/**
 * A purchase token as the log shows it: the first 12 hex characters of its SHA-256. The token
 * itself is a credential of the purchase (it reads it, and credits it to the account it names),
 * so it is never logged; the hash still finds the row (`encode(sha256(purchase_token::bytea), 'hex')`).
 */
export const tokenHash = (purchaseToken: string) =>
  createHash('sha256').update(purchaseToken).digest('hex').slice(0, 12);

/**
 * The one store reference of a purchase, credited once: Google's order id; a purchase without one
 * (some license-testing purchases) by its token.
 */
export const storeRefOf = (purchase: Pick<ProductPurchase, 'orderId'>, purchaseToken: string) =>
  purchase.orderId ?? `token:${purchaseToken}`;

export type PurchaseVerdict =
  | { kind: 'credit' }
  | { kind: 'pending' }
  | { kind: 'cancelled' }
  | { kind: 'not_yours' }
  | { kind: 'unsupported'; detail: string };

/**
 * What a purchase read from Google grants `userId`: only a purchased one made for that account
 * (the app sets `obfuscatedExternalAccountId` to the user id), of the product asked for, one at a time.
 */
export function purchaseVerdict(purchase: ProductPurchase, userId: string, sku: string): PurchaseVerdict {
  if (purchase.productId !== null && purchase.productId !== sku)
    return { kind: 'unsupported', detail: `it is a purchase of ${purchase.productId}, not ${sku}` };
  if (purchase.obfuscatedExternalAccountId !== userId) return { kind: 'not_yours' };
  if (purchase.purchaseState === PURCHASE_STATE.pending) return { kind: 'pending' };
  if (purchase.purchaseState !== PURCHASE_STATE.purchased) return { kind: 'cancelled' };
  if (purchase.quantity !== 1)
    return { kind: 'unsupported', detail: `it buys ${purchase.quantity} at once; multi-quantity purchases are off` };
  return { kind: 'credit' };
}

/** Google refunds a purchase not acknowledged (consuming acknowledges) within three days of it. */
export const ACKNOWLEDGE_WITHIN_MS = 3 * 24 * 3_600_000;

/**
 * When a failed consume is tried again: 1 minute after the first failure, doubling, at most an hour
 * apart, so even a long outage leaves dozens of tries inside Google's three days.
 */
export function consumeRetryDelayMs(attempts: number): number {
  return Math.min(60_000 * 2 ** Math.max(0, attempts - 1), 3_600_000);
}

/** Past Google's three days a consume is pointless: Google has refunded the purchase (the voided job takes the coins back). */
export const consumeTooLate = (purchaseTime: Date, now: Date) =>
  now.getTime() - purchaseTime.getTime() > ACKNOWLEDGE_WITHIN_MS;

/** `voidedpurchases.list` answers at most 30 days back. */
export const VOIDED_MAX_LOOKBACK_MS = 30 * 24 * 3_600_000;
/** Each run starts a little before the last one ended: Google may list a voided purchase late. */
export const VOIDED_OVERLAP_MS = 60 * 60_000;

/** Where a run of the voided-purchases job starts reading: the last run's end less the overlap, within Google's 30 days. */
export function voidedWindowStart(lastEnd: Date | null, now: Date): number {
  const earliest = now.getTime() - VOIDED_MAX_LOOKBACK_MS + 60_000;
  if (!lastEnd) return earliest;
  return Math.max(earliest, lastEnd.getTime() - VOIDED_OVERLAP_MS);
}

/** A real-time developer notification (DeveloperNotification), the parts this service acts on. */
export type DeveloperNotification =
  | { kind: 'oneTimeProduct'; notificationType: number; purchaseToken: string; sku: string; packageName: string }
  | { kind: 'voided'; purchaseToken: string; orderId: string; productType: number | null; packageName: string }
  | { kind: 'test'; packageName: string }
  | { kind: 'other'; packageName: string };

export const ONE_TIME_NOTIFICATION = { purchased: 1, canceled: 2 } as const;
/** `voidedPurchaseNotification.productType`: 1 subscription, 2 one-time product. */
export const VOIDED_ONE_TIME = 2;

/** A Pub/Sub push body: the message id and its data, decoded as a DeveloperNotification; undefined when it is not one. */
export function readPush(
  body: unknown,
): { messageId: string; notification: DeveloperNotification | undefined } | undefined {
  if (!isRecord(body) || !isRecord(body.message)) return undefined;
  const messageId = text(body.message.messageId) ?? text(body.message.message_id);
  if (!messageId || messageId.length > 200) return undefined;
  const data = text(body.message.data);
  let decoded: unknown;
  try {
    decoded = data ? JSON.parse(Buffer.from(data, 'base64').toString('utf8')) : undefined;
  } catch {
    decoded = undefined;
  }
  return { messageId, notification: readNotification(decoded) };
}

export function readNotification(value: unknown): DeveloperNotification | undefined {
  if (!isRecord(value)) return undefined;
  const packageName = text(value.packageName);
  if (!packageName) return undefined;
  const oneTime = value.oneTimeProductNotification;
  if (isRecord(oneTime)) {
    const purchaseToken = text(oneTime.purchaseToken);
    const sku = text(oneTime.sku);
    const notificationType = int(oneTime.notificationType);
    if (!purchaseToken || !sku || notificationType === null) return undefined;
    return { kind: 'oneTimeProduct', notificationType, purchaseToken, sku, packageName };
  }
  const voided = value.voidedPurchaseNotification;
  if (isRecord(voided)) {
    const purchaseToken = text(voided.purchaseToken);
    const orderId = text(voided.orderId);
    if (!purchaseToken || !orderId) return undefined;
    return { kind: 'voided', purchaseToken, orderId, productType: int(voided.productType), packageName };
  }
  if (isRecord(value.testNotification)) return { kind: 'test', packageName };
  return { kind: 'other', packageName };
}
