CREATE TABLE "webhook_attempts" (
	"id" text PRIMARY KEY NOT NULL,
	"delivery_id" text NOT NULL,
	"attempted_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"outcome" text NOT NULL,
	"status_code" integer,
	"error" text,
	"duration_ms" integer NOT NULL,
	"address" text,
	"response_body" text,
	CONSTRAINT "webhook_attempts_outcome_check" CHECK ("webhook_attempts"."outcome" in ('delivered', 'failed', 'gone', 'refused'))
);
--> statement-breakpoint
CREATE TABLE "webhook_deliveries" (
	"id" text PRIMARY KEY NOT NULL,
	"endpoint_id" text NOT NULL,
	"message_id" text NOT NULL,
	"event_id" bigint,
	"event_type" text NOT NULL,
	"body" text NOT NULL,
	"status" text DEFAULT 'pending' NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"next_attempt_at" timestamp (3) with time zone,
	"lease_id" text,
	"locked_until" timestamp (3) with time zone,
	"last_status_code" integer,
	"last_error" text,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"delivered_at" timestamp (3) with time zone,
	CONSTRAINT "webhook_deliveries_message_key" UNIQUE("endpoint_id","message_id"),
	CONSTRAINT "webhook_deliveries_status_check" CHECK ("webhook_deliveries"."status" in ('pending', 'delivered', 'failed')),
	CONSTRAINT "webhook_deliveries_pending_check" CHECK (("webhook_deliveries"."status" = 'pending') = ("webhook_deliveries"."next_attempt_at" is not null))
);
--> statement-breakpoint
CREATE TABLE "webhook_endpoints" (
	"id" text PRIMARY KEY NOT NULL,
	"team_id" text,
	"url" text NOT NULL,
	"description" text DEFAULT '' NOT NULL,
	"event_types" text[] NOT NULL,
	"enabled" boolean DEFAULT true NOT NULL,
	"disabled_reason" text,
	"disabled_at" timestamp (3) with time zone,
	"disabled_detail" text,
	"failing_since" timestamp (3) with time zone,
	"secret" text NOT NULL,
	"previous_secret" text,
	"previous_secret_expires_at" timestamp (3) with time zone,
	"created_by" text NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "webhook_endpoints_event_types_check" CHECK (cardinality("webhook_endpoints"."event_types") >= 1 and "webhook_endpoints"."event_types" <@ array['purchase.completed', 'pack.opened', 'wallet.credited', 'wallet.debited', 'order.fulfilled', 'order.refunded', 'pack.published', 'member.added', 'quest.completed', 'reward.granted', 'reward.revoked', 'round.finalized']::text[]),
	CONSTRAINT "webhook_endpoints_disabled_check" CHECK ("webhook_endpoints"."enabled" = ("webhook_endpoints"."disabled_reason" is null) and ("webhook_endpoints"."disabled_reason" is null) = ("webhook_endpoints"."disabled_at" is null)),
	CONSTRAINT "webhook_endpoints_disabled_reason_check" CHECK ("webhook_endpoints"."disabled_reason" in ('manual', 'gone', 'failing')),
	CONSTRAINT "webhook_endpoints_previous_secret_check" CHECK (("webhook_endpoints"."previous_secret" is null) = ("webhook_endpoints"."previous_secret_expires_at" is null))
);
--> statement-breakpoint
ALTER TABLE "job_runs" DROP CONSTRAINT "job_runs_job_check";--> statement-breakpoint
ALTER TABLE "webhook_attempts" ADD CONSTRAINT "webhook_attempts_delivery_id_webhook_deliveries_id_fk" FOREIGN KEY ("delivery_id") REFERENCES "public"."webhook_deliveries"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_endpoint_id_webhook_endpoints_id_fk" FOREIGN KEY ("endpoint_id") REFERENCES "public"."webhook_endpoints"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "webhook_endpoints" ADD CONSTRAINT "webhook_endpoints_team_id_teams_id_fk" FOREIGN KEY ("team_id") REFERENCES "public"."teams"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "webhook_attempts_delivery_idx" ON "webhook_attempts" USING btree ("delivery_id","attempted_at" DESC NULLS LAST,"id" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "webhook_deliveries_due_idx" ON "webhook_deliveries" USING btree ("next_attempt_at") WHERE "webhook_deliveries"."status" = 'pending';--> statement-breakpoint
CREATE INDEX "webhook_deliveries_list_idx" ON "webhook_deliveries" USING btree ("endpoint_id","created_at" DESC NULLS LAST,"id" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "webhook_deliveries_ended_idx" ON "webhook_deliveries" USING btree ("created_at") WHERE "webhook_deliveries"."status" <> 'pending';--> statement-breakpoint
CREATE INDEX "webhook_endpoints_team_idx" ON "webhook_endpoints" USING btree ("team_id","created_at" DESC NULLS LAST,"id" DESC NULLS LAST);--> statement-breakpoint
ALTER TABLE "job_runs" ADD CONSTRAINT "job_runs_job_check" CHECK ("job_runs"."job" in ('expire-purchases', 'expire-orders', 'reconcile-orders', 'end-quests', 'advance-rounds', 'freeze-leaderboards', 'prune-webhook-deliveries'));