CREATE TABLE "leaderboard_counts" (
	"board" text NOT NULL,
	"level" smallint NOT NULL,
	"bucket" bigint NOT NULL,
	"fans" integer NOT NULL,
	CONSTRAINT "leaderboard_counts_board_level_bucket_pk" PRIMARY KEY("board","level","bucket"),
	CONSTRAINT "leaderboard_counts_fans_check" CHECK ("leaderboard_counts"."fans" >= 0),
	CONSTRAINT "leaderboard_counts_level_check" CHECK ("leaderboard_counts"."level" between 0 and 5)
);
--> statement-breakpoint
CREATE TABLE "leaderboard_entries" (
	"board" text NOT NULL,
	"user_id" text NOT NULL,
	"score" bigint NOT NULL,
	"order_key" bigint GENERATED ALWAYS AS (- score) STORED NOT NULL,
	"reached_at" timestamp (3) with time zone NOT NULL,
	CONSTRAINT "leaderboard_entries_board_user_id_pk" PRIMARY KEY("board","user_id")
);
--> statement-breakpoint
CREATE TABLE "leaderboard_frozen_rows" (
	"board" text NOT NULL,
	"position" integer NOT NULL,
	"rank" integer NOT NULL,
	"user_id" text NOT NULL,
	"score" bigint NOT NULL,
	CONSTRAINT "leaderboard_frozen_rows_board_position_pk" PRIMARY KEY("board","position"),
	CONSTRAINT "leaderboard_frozen_rows_user_unique" UNIQUE("board","user_id"),
	CONSTRAINT "leaderboard_frozen_rows_rank_check" CHECK ("leaderboard_frozen_rows"."rank" >= 1 and "leaderboard_frozen_rows"."rank" <= "leaderboard_frozen_rows"."position")
);
--> statement-breakpoint
CREATE TABLE "leaderboards" (
	"key" text PRIMARY KEY NOT NULL,
	"kind" text NOT NULL,
	"subject_id" text,
	"window" text NOT NULL,
	"window_key" text NOT NULL,
	"time_zone" text NOT NULL,
	"entrants" integer DEFAULT 0 NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"frozen_at" timestamp (3) with time zone,
	"hash" text,
	CONSTRAINT "leaderboards_frozen_check" CHECK (("leaderboards"."frozen_at" is null) = ("leaderboards"."hash" is null)),
	CONSTRAINT "leaderboards_entrants_check" CHECK ("leaderboards"."entrants" >= 0)
);
--> statement-breakpoint
ALTER TABLE "events" DROP CONSTRAINT "events_type_check";--> statement-breakpoint
CREATE INDEX "leaderboard_entries_order_idx" ON "leaderboard_entries" USING btree ("board","order_key","reached_at","user_id");--> statement-breakpoint
CREATE INDEX "leaderboards_open_idx" ON "leaderboards" USING btree ("kind","window") WHERE "leaderboards"."frozen_at" is null;--> statement-breakpoint
ALTER TABLE "events" ADD CONSTRAINT "events_type_check" CHECK ("events"."type" in ('purchase.completed', 'pack.opened', 'wallet.credited', 'wallet.debited', 'order.fulfilled', 'order.refunded', 'pack.published', 'member.added', 'quest.completed', 'reward.granted', 'round.finalized', 'reward.revoked'));