CREATE TABLE "apple_consumption_consents" (
	"user_id" text PRIMARY KEY NOT NULL,
	"consented" boolean NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "apple_history_cursor" (
	"id" text PRIMARY KEY NOT NULL,
	"read_until" timestamp (3) with time zone NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "apple_history_cursor_one_row" CHECK ("apple_history_cursor"."id" = 'history')
);
--> statement-breakpoint
CREATE TABLE "apple_notifications" (
	"notification_uuid" text PRIMARY KEY NOT NULL,
	"type" text NOT NULL,
	"subtype" text,
	"transaction_id" text,
	"signed_at" timestamp (3) with time zone NOT NULL,
	"source" text NOT NULL,
	"received_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "apple_notifications_source_check" CHECK ("apple_notifications"."source" in ('webhook', 'history'))
);
--> statement-breakpoint
ALTER TABLE "job_runs" DROP CONSTRAINT "job_runs_job_check";--> statement-breakpoint
ALTER TABLE "apple_consumption_consents" ADD CONSTRAINT "apple_consumption_consents_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "apple_notifications_transaction_idx" ON "apple_notifications" USING btree ("transaction_id");--> statement-breakpoint
ALTER TABLE "job_runs" ADD CONSTRAINT "job_runs_job_check" CHECK ("job_runs"."job" in ('expire-purchases', 'expire-orders', 'reconcile-orders', 'end-quests', 'advance-rounds', 'freeze-leaderboards', 'prune-webhook-deliveries', 'retry-google-consumes', 'reconcile-google-voided', 'recover-apple-notifications'));