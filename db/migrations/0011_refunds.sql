ALTER TABLE "orders" ADD COLUMN "amount_refunded" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "orders" ADD COLUMN "coins_reversed" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "orders" ADD COLUMN "uncollected" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
CREATE INDEX "orders_payment_intent_idx" ON "orders" USING btree ("payment_intent");--> statement-breakpoint
CREATE INDEX "orders_uncollected_idx" ON "orders" USING btree ("created_at") WHERE "orders"."uncollected" > 0;--> statement-breakpoint
ALTER TABLE "orders" ADD CONSTRAINT "orders_reversal_check" CHECK ("orders"."uncollected" >= 0 and "orders"."uncollected" <= "orders"."coins_reversed" and "orders"."coins_reversed" <= "orders"."coins");