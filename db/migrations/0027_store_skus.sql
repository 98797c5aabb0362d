ALTER TABLE "orders" DROP CONSTRAINT "orders_provider_ref_unique";--> statement-breakpoint
ALTER TABLE "orders" DROP CONSTRAINT "orders_amounts_check";--> statement-breakpoint
ALTER TABLE "orders" ALTER COLUMN "price_id" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "orders" ALTER COLUMN "amount" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "orders" ALTER COLUMN "currency" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "orders" ALTER COLUMN "expires_at" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "orders" ADD COLUMN "purchased_at" timestamp (3) with time zone;--> statement-breakpoint
ALTER TABLE "orders" ADD COLUMN "store_event_at" timestamp (3) with time zone;--> statement-breakpoint
ALTER TABLE "products" ADD COLUMN "apple_product_id" text;--> statement-breakpoint
ALTER TABLE "products" ADD COLUMN "google_product_id" text;--> statement-breakpoint
CREATE UNIQUE INDEX "orders_provider_ref_idx" ON "orders" USING btree ("provider","provider_ref");--> statement-breakpoint
ALTER TABLE "products" ADD CONSTRAINT "products_apple_product_id_unique" UNIQUE("apple_product_id");--> statement-breakpoint
ALTER TABLE "products" ADD CONSTRAINT "products_google_product_id_unique" UNIQUE("google_product_id");--> statement-breakpoint
ALTER TABLE "orders" ADD CONSTRAINT "orders_provider_check" CHECK ("orders"."provider" in ('stripe', 'apple', 'google'));--> statement-breakpoint
ALTER TABLE "orders" ADD CONSTRAINT "orders_stripe_check" CHECK ("orders"."provider" <> 'stripe' or ("orders"."price_id" is not null and "orders"."amount" is not null and "orders"."expires_at" is not null));--> statement-breakpoint
ALTER TABLE "orders" ADD CONSTRAINT "orders_store_check" CHECK ("orders"."provider" = 'stripe' or ("orders"."provider_ref" is not null and "orders"."status" not in ('pending', 'expired')));--> statement-breakpoint
ALTER TABLE "orders" ADD CONSTRAINT "orders_amounts_check" CHECK ("orders"."coins" > 0 and ("orders"."amount" is null or "orders"."amount" > 0) and ("orders"."amount" is null) = ("orders"."currency" is null));