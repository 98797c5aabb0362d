CREATE TABLE "event_cursors" (
	"consumer" text PRIMARY KEY NOT NULL,
	"txid" "xid8" DEFAULT '0'::xid8 NOT NULL,
	"event_id" bigint DEFAULT 0 NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "events" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"txid" "xid8" DEFAULT pg_current_xact_id() NOT NULL,
	"type" text NOT NULL,
	"occurred_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"user_id" text,
	"team_id" text,
	"subject" text NOT NULL,
	"data" jsonb NOT NULL,
	CONSTRAINT "events_type_check" CHECK ("events"."type" in ('purchase.completed', 'pack.opened', 'wallet.credited', 'wallet.debited', 'order.fulfilled', 'order.refunded', 'pack.published', 'member.added', 'quest.completed', 'reward.granted', 'reward.revoked'))
);
--> statement-breakpoint
CREATE INDEX "events_order_idx" ON "events" USING btree ("txid","id");--> statement-breakpoint
CREATE INDEX "events_user_idx" ON "events" USING btree ("user_id","id");