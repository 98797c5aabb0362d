ALTER TABLE "orders" ADD COLUMN "needs_review" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "orders" ADD COLUMN "last_checked_at" timestamp (3) with time zone;--> statement-breakpoint
CREATE INDEX "orders_pending_checked_idx" ON "orders" USING btree ("last_checked_at" NULLS FIRST,"created_at","id") WHERE "orders"."status" = 'pending';--> statement-breakpoint
CREATE INDEX "orders_needs_review_idx" ON "orders" USING btree ("created_at" DESC NULLS LAST,"id" DESC NULLS LAST) WHERE "orders"."needs_review";