import type { PriceRow, ProductRow } from '../../../db/schema.js';
import type {
  CreatePriceBody,
  CreateProductBody,
  Price,
  Product,
  UpdateProductBody,
} from '../../../schemas/products.js';
import type { Database, DatabaseHandle } from '../database/index.js';
import { ConflictError } from '../errors.js';
import { priceNotFound, productNotFound } from './errors.js';
import * as repository from './repository.js';
import { bundleCoins } from './rules.js';

/** A bundle as sold, without its prices. */
export type ProductSummary = Omit<Product, 'prices'>;

export function toPrice(row: PriceRow): Price {
  return {
    id: row.id,
    productId: row.productId,
    currency: row.currency,
    unitAmount: row.unitAmount,
    active: row.active,
    createdAt: row.createdAt.toISOString(),
  };
}

function toProductSummary(row: ProductRow): ProductSummary {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    coins: row.coins,
    bonusCoins: row.bonusCoins,
    active: row.active,
    sortOrder: row.sortOrder,
    appleProductId: row.appleProductId,
    googleProductId: row.googleProductId,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

function toProduct(row: ProductRow & { prices: PriceRow[] }): Product {
  return { ...toProductSummary(row), prices: row.prices.map(toPrice) };
}

/**
 * A store SKU names one bundle: one already given to another bundle is refused (409), checked
 * while the SKU is held (two admins racing for it are checked in turn).
 */
async function assertSkusFree(tx: Database, id: string | null, body: StoreSkus): Promise<void> {
  for (const store of ['apple', 'google'] as const) {
    const sku = store === 'apple' ? body.appleProductId : body.googleProductId;
    if (!sku) continue;
    await repository.lockStoreSku(tx, store, sku);
    const holder = await repository.findByStoreSku(tx, store, sku);
    if (holder && holder.id !== id)
      throw new ConflictError('store_sku_taken', `Another bundle already has this ${store} product id.`);
  }
}

type StoreSkus = { appleProductId?: string | null; googleProductId?: string | null };

/** Coin bundles and their prices: what fans can buy coins with. */
export function createProductsService(db: DatabaseHandle) {
  return {
    /** The bundle a store SKU names, on sale or not; undefined when none does. */
    async findByStoreSku(store: 'apple' | 'google', sku: string): Promise<ProductSummary | undefined> {
      const row = await repository.findByStoreSku(db.orm, store, sku);
      return row ? toProductSummary(row) : undefined;
    },

    /** The public list: active bundles with at least one active price, and only those prices. */
    async onSale(): Promise<Product[]> {
      return (await repository.listOnSale(db.orm)).map(toProduct);
    },

    async all(): Promise<Product[]> {
      return (await repository.listAll(db.orm)).map(toProduct);
    },

    async get(id: string): Promise<Product> {
      const row = await repository.findProduct(db.orm, id);
      if (!row) throw productNotFound();
      return toProduct(await repository.productWithPrices(db.orm, row));
    },

    /** A bundle, on sale or not, without its prices; undefined for an unknown id. */
    async findProduct(id: string): Promise<ProductSummary | undefined> {
      const row = await repository.findProduct(db.orm, id);
      return row ? toProductSummary(row) : undefined;
    },

    /** A price, active or not; undefined for an unknown id. */
    async findPrice(id: string): Promise<Price | undefined> {
      const row = await repository.findPrice(db.orm, id);
      return row ? toPrice(row) : undefined;
    },

    create(body: CreateProductBody): Promise<Product> {
      bundleCoins(body.coins, body.bonusCoins ?? 0);
      return db.transaction(async (tx) => {
        await assertSkusFree(tx, null, body);
        return toProduct({ ...(await repository.insertProduct(tx, body)), prices: [] });
      });
    },

    /** Orders already made keep the coins they were made for (their own snapshot). */
    update(id: string, changes: UpdateProductBody): Promise<Product> {
      return db.transaction(async (tx) => {
        const current = await repository.findProduct(tx, id, { lock: true });
        if (!current) throw productNotFound();
        bundleCoins(changes.coins ?? current.coins, changes.bonusCoins ?? current.bonusCoins);
        await assertSkusFree(tx, id, changes);
        return toProduct(await repository.productWithPrices(tx, await repository.updateProduct(tx, id, changes)));
      });
    },

    /**
     * A new price, active at once. An active price of the product in the same currency is
     * replaced: it turns inactive in the same transaction (changing what a bundle costs is making
     * a new price). The product's row lock orders concurrent price changes.
     */
    addPrice(productId: string, body: CreatePriceBody): Promise<{ price: Price; replaced: Price | null }> {
      return db.transaction(async (tx) => {
        if (!(await repository.findProduct(tx, productId, { lock: true }))) throw productNotFound();
        const previous = await repository.activePriceFor(tx, productId, body.currency);
        const replaced = previous ? await repository.setPriceActive(tx, previous.id, false) : null;
        const price = await repository.insertPrice(tx, productId, body);
        return { price: toPrice(price), replaced: replaced ? toPrice(replaced) : null };
      });
    },

    /** `active` is a price's only editable field; a second active price in one currency is refused. */
    setPriceActive(priceId: string, active: boolean): Promise<Price> {
      return db.transaction(async (tx) => {
        const price = await repository.findPrice(tx, priceId);
        if (!price) throw priceNotFound();
        await repository.findProduct(tx, price.productId, { lock: true });
        if (active && (await repository.activePriceFor(tx, price.productId, price.currency, price.id))) {
          throw new ConflictError(
            'active_price_exists',
            `This product already has an active ${price.currency} price: deactivate it first, or create a new price (which replaces it).`,
          );
        }
        return toPrice(await repository.setPriceActive(tx, priceId, active));
      });
    },
  };
}

export type ProductsService = ReturnType<typeof createProductsService>;
