import { randomUUID } from 'node:crypto';
import { and, asc, desc, eq, inArray, ne, sql } from 'drizzle-orm';
import { type PriceRow, prices, type ProductRow, products } from '../../../db/schema.js';
import type { CreatePriceBody, CreateProductBody, UpdateProductBody } from '../../../schemas/products.js';
import type { Database } from '../database/index.js';

/** SQL of coin bundles and their prices. Writes run in the caller's transaction. */

export interface ProductWithPrices extends ProductRow {
  prices: PriceRow[];
}

async function withPrices(db: Database, rows: ProductRow[], activeOnly: boolean): Promise<ProductWithPrices[]> {
  if (rows.length === 0) return [];
  const priceRows = await db
    .select()
    .from(prices)
    .where(
      and(
        inArray(
          prices.productId,
          rows.map((row) => row.id),
        ),
        activeOnly ? eq(prices.active, true) : undefined,
      ),
    )
    .orderBy(desc(prices.createdAt), desc(prices.id));
  return rows.map((row) => ({ ...row, prices: priceRows.filter((price) => price.productId === row.id) }));
}

/** Active products that can be bought (an active price, or a store SKU, at least), with their active prices. */
export async function listOnSale(db: Database): Promise<ProductWithPrices[]> {
  const rows = await db
    .select()
    .from(products)
    .where(
      and(
        eq(products.active, true),
        sql`(exists (select 1 from ${prices} where ${prices.productId} = ${products.id} and ${prices.active})
          or ${products.appleProductId} is not null or ${products.googleProductId} is not null)`,
      ),
    )
    .orderBy(asc(products.sortOrder), asc(products.id))
    .limit(500);
  return withPrices(db, rows, true);
}

export async function listAll(db: Database): Promise<ProductWithPrices[]> {
  const rows = await db.select().from(products).orderBy(asc(products.sortOrder), asc(products.id)).limit(500);
  return withPrices(db, rows, false);
}

export async function findProduct(
  db: Database,
  id: string,
  options: { lock?: boolean } = {},
): Promise<ProductRow | undefined> {
  const query = db.select().from(products).where(eq(products.id, id));
  const [row] = options.lock ? await query.for('update') : await query;
  return row;
}

export async function productWithPrices(db: Database, row: ProductRow): Promise<ProductWithPrices> {
  return (await withPrices(db, [row], false))[0] as ProductWithPrices;
}

export async function insertProduct(tx: Database, body: CreateProductBody): Promise<ProductRow> {
  const [row] = await tx
    .insert(products)
    .values({
      id: randomUUID(),
      name: body.name,
      description: body.description ?? null,
      coins: body.coins,
      bonusCoins: body.bonusCoins ?? 0,
      active: body.active ?? true,
      sortOrder: body.sortOrder ?? 0,
      appleProductId: body.appleProductId ?? null,
      googleProductId: body.googleProductId ?? null,
    })
    .returning();
  return row as ProductRow;
}

export async function updateProduct(tx: Database, id: string, changes: UpdateProductBody): Promise<ProductRow> {
  const [row] = await tx
    .update(products)
    .set({ ...changes, updatedAt: sql`now()` })
    .where(eq(products.id, id))
    .returning();
  return row as ProductRow;
}

/**
 * Holds a store SKU until the transaction ends, so two admins giving it to two bundles at once
 * are checked one after the other (the second then sees the first's bundle: a 409, not the unique
 * index's error).
 */
export async function lockStoreSku(tx: Database, store: 'apple' | 'google', sku: string): Promise<void> {
  await tx.execute(sql`select pg_advisory_xact_lock(hashtextextended(${`store-sku:${store}:${sku}`}, 0))`);
}

/** The product sold under a store SKU (active or not). */
export async function findByStoreSku(
  db: Database,
  store: 'apple' | 'google',
  sku: string,
): Promise<ProductRow | undefined> {
  const column = store === 'apple' ? products.appleProductId : products.googleProductId;
  const [row] = await db.select().from(products).where(eq(column, sku));
  return row;
}

export async function findPrice(tx: Database, id: string): Promise<PriceRow | undefined> {
  const [row] = await tx.select().from(prices).where(eq(prices.id, id));
  return row;
}

/** The product's other active price in the same currency, if any. */
export async function activePriceFor(
  tx: Database,
  productId: string,
  currency: string,
  exceptId?: string,
): Promise<PriceRow | undefined> {
  const [row] = await tx
    .select()
    .from(prices)
    .where(
      and(
        eq(prices.productId, productId),
        eq(prices.currency, currency),
        eq(prices.active, true),
        exceptId ? ne(prices.id, exceptId) : undefined,
      ),
    );
  return row;
}

export async function insertPrice(tx: Database, productId: string, body: CreatePriceBody): Promise<PriceRow> {
  const [row] = await tx
    .insert(prices)
    .values({ id: randomUUID(), productId, currency: body.currency, unitAmount: body.unitAmount })
    .returning();
  return row as PriceRow;
}

export async function setPriceActive(tx: Database, id: string, active: boolean): Promise<PriceRow> {
  const [row] = await tx.update(prices).set({ active }).where(eq(prices.id, id)).returning();
  return row as PriceRow;
}
