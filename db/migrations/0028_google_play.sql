CREATE TABLE "google_play_messages" (
	"message_id" text PRIMARY KEY NOT NULL,
	"kind" text NOT NULL,
	"received_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "google_play_purchases" (
	"purchase_token" text PRIMARY KEY NOT NULL,
	"sku" text NOT NULL,
	"store_ref" text NOT NULL,
	"user_id" text NOT NULL,
	"purchased_at" timestamp (3) with time zone NOT NULL,
	"consume_state" text DEFAULT 'pending' NOT NULL,
	"consume_attempts" integer DEFAULT 0 NOT NULL,
	"next_consume_at" timestamp (3) with time zone,
	"last_consume_error" text,
	"consumed_at" timestamp (3) with time zone,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "google_play_purchases_state_check" CHECK ("google_play_purchases"."consume_state" in ('pending', 'consumed', 'abandoned')),
	CONSTRAINT "google_play_purchases_consumed_check" CHECK (("google_play_purchases"."consume_state" = 'consumed') = ("google_play_purchases"."consumed_at" is not null))
);
--> statement-breakpoint
CREATE TABLE "google_play_sync" (
	"name" text PRIMARY KEY NOT NULL,
	"synced_until" timestamp (3) with time zone NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "job_runs" DROP CONSTRAINT "job_runs_job_check";--> statement-breakpoint
ALTER TABLE "google_play_purchases" ADD CONSTRAINT "google_play_purchases_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "google_play_messages_received_idx" ON "google_play_messages" USING btree ("received_at");--> statement-breakpoint
CREATE INDEX "google_play_purchases_due_idx" ON "google_play_purchases" USING btree ("next_consume_at") WHERE "google_play_purchases"."consume_state" = 'pending';--> statement-breakpoint
CREATE INDEX "google_play_purchases_store_ref_idx" ON "google_play_purchases" USING btree ("store_ref");--> statement-breakpoint
ALTER TABLE "job_runs" ADD CONSTRAINT "job_runs_job_check" CHECK ("job_runs"."job" in ('expire-purchases', 'expire-orders', 'reconcile-orders', 'end-quests', 'advance-rounds', 'freeze-leaderboards', 'prune-webhook-deliveries', 'retry-google-consumes', 'reconcile-google-voided'));