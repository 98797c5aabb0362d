ALTER TABLE "orders" ADD COLUMN "dispute_taken" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "orders" ADD COLUMN "dispute_uncollected" integer DEFAULT 0 NOT NULL;