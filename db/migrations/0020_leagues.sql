CREATE TABLE "league_rounds" (
	"id" text PRIMARY KEY NOT NULL,
	"league_id" text NOT NULL,
	"name" text NOT NULL,
	"season" text NOT NULL,
	"opens_at" timestamp (3) with time zone NOT NULL,
	"locks_at" timestamp (3) with time zone NOT NULL,
	"ends_at" timestamp (3) with time zone NOT NULL,
	"finalizes_at" timestamp (3) with time zone,
	"prizes" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"status" text DEFAULT 'upcoming' NOT NULL,
	"finalized_at" timestamp (3) with time zone,
	"standings_hash" text,
	"entrants" integer,
	"prizes_paid_at" timestamp (3) with time zone,
	"created_by" text NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "league_rounds_status_check" CHECK ("league_rounds"."status" in ('upcoming', 'open', 'locked', 'final')),
	CONSTRAINT "league_rounds_times_check" CHECK ("league_rounds"."opens_at" < "league_rounds"."locks_at" and "league_rounds"."locks_at" < "league_rounds"."ends_at" and ("league_rounds"."finalizes_at" is null or "league_rounds"."finalizes_at" >= "league_rounds"."ends_at")),
	CONSTRAINT "league_rounds_final_check" CHECK (("league_rounds"."finalized_at" is null) = ("league_rounds"."standings_hash" is null) and ("league_rounds"."finalized_at" is null) = ("league_rounds"."entrants" is null) and ("league_rounds"."prizes_paid_at" is null or "league_rounds"."finalized_at" is not null))
);
--> statement-breakpoint
CREATE TABLE "leagues" (
	"id" text PRIMARY KEY NOT NULL,
	"team_id" text NOT NULL,
	"name" text NOT NULL,
	"description" text DEFAULT '' NOT NULL,
	"rules" jsonb NOT NULL,
	"time_zone" text DEFAULT 'UTC' NOT NULL,
	"season" text NOT NULL,
	"status" text DEFAULT 'active' NOT NULL,
	"created_by" text NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "leagues_status_check" CHECK ("leagues"."status" in ('active', 'archived'))
);
--> statement-breakpoint
CREATE TABLE "lineup_entries" (
	"round_id" text NOT NULL,
	"user_id" text NOT NULL,
	"position" integer NOT NULL,
	"pull_id" text NOT NULL,
	"collectible_id" text NOT NULL,
	"rarity" text NOT NULL,
	CONSTRAINT "lineup_entries_round_id_user_id_position_pk" PRIMARY KEY("round_id","user_id","position"),
	CONSTRAINT "lineup_entries_round_pull_unique" UNIQUE("round_id","pull_id"),
	CONSTRAINT "lineup_entries_position_check" CHECK ("lineup_entries"."position" >= 0)
);
--> statement-breakpoint
CREATE TABLE "lineups" (
	"round_id" text NOT NULL,
	"user_id" text NOT NULL,
	"submitted_at" timestamp (3) with time zone NOT NULL,
	"updated_at" timestamp (3) with time zone NOT NULL,
	CONSTRAINT "lineups_round_id_user_id_pk" PRIMARY KEY("round_id","user_id")
);
--> statement-breakpoint
CREATE TABLE "round_scores" (
	"round_id" text NOT NULL,
	"collectible_id" text NOT NULL,
	"score" integer NOT NULL,
	"updated_at" timestamp (3) with time zone NOT NULL,
	CONSTRAINT "round_scores_round_id_collectible_id_pk" PRIMARY KEY("round_id","collectible_id")
);
--> statement-breakpoint
CREATE TABLE "round_standings" (
	"round_id" text NOT NULL,
	"user_id" text NOT NULL,
	"position" integer NOT NULL,
	"rank" integer NOT NULL,
	"score" bigint NOT NULL,
	"best" bigint NOT NULL,
	"submitted_at" timestamp (3) with time zone NOT NULL,
	"reward_id" text,
	"prize_band" integer,
	"promised" boolean DEFAULT false NOT NULL,
	"grant_id" text,
	CONSTRAINT "round_standings_round_id_user_id_pk" PRIMARY KEY("round_id","user_id"),
	CONSTRAINT "round_standings_position_unique" UNIQUE("round_id","position"),
	CONSTRAINT "round_standings_prize_check" CHECK (("round_standings"."reward_id" is null) = ("round_standings"."prize_band" is null) and ("round_standings"."grant_id" is null or "round_standings"."reward_id" is not null))
);
--> statement-breakpoint
ALTER TABLE "job_runs" DROP CONSTRAINT "job_runs_job_check";--> statement-breakpoint
ALTER TABLE "events" DROP CONSTRAINT "events_type_check";--> statement-breakpoint
ALTER TABLE "league_rounds" ADD CONSTRAINT "league_rounds_league_id_leagues_id_fk" FOREIGN KEY ("league_id") REFERENCES "public"."leagues"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "leagues" ADD CONSTRAINT "leagues_team_id_teams_id_fk" FOREIGN KEY ("team_id") REFERENCES "public"."teams"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "lineup_entries" ADD CONSTRAINT "lineup_entries_pull_id_pulls_id_fk" FOREIGN KEY ("pull_id") REFERENCES "public"."pulls"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "lineups" ADD CONSTRAINT "lineups_round_id_league_rounds_id_fk" FOREIGN KEY ("round_id") REFERENCES "public"."league_rounds"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "lineups" ADD CONSTRAINT "lineups_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "round_scores" ADD CONSTRAINT "round_scores_round_id_league_rounds_id_fk" FOREIGN KEY ("round_id") REFERENCES "public"."league_rounds"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "round_standings" ADD CONSTRAINT "round_standings_round_id_league_rounds_id_fk" FOREIGN KEY ("round_id") REFERENCES "public"."league_rounds"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "round_standings" ADD CONSTRAINT "round_standings_reward_id_rewards_id_fk" FOREIGN KEY ("reward_id") REFERENCES "public"."rewards"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "round_standings" ADD CONSTRAINT "round_standings_grant_id_grants_id_fk" FOREIGN KEY ("grant_id") REFERENCES "public"."grants"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "league_rounds_league_idx" ON "league_rounds" USING btree ("league_id","opens_at" DESC NULLS LAST,"id" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "league_rounds_due_idx" ON "league_rounds" USING btree ("finalizes_at") WHERE "league_rounds"."finalized_at" is null;--> statement-breakpoint
CREATE INDEX "league_rounds_unpaid_idx" ON "league_rounds" USING btree ("finalized_at") WHERE "league_rounds"."finalized_at" is not null and "league_rounds"."prizes_paid_at" is null;--> statement-breakpoint
CREATE INDEX "league_rounds_play_idx" ON "league_rounds" USING btree ("locks_at","ends_at");--> statement-breakpoint
CREATE INDEX "leagues_list_idx" ON "leagues" USING btree ("created_at" DESC NULLS LAST,"id" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "leagues_team_list_idx" ON "leagues" USING btree ("team_id","created_at" DESC NULLS LAST,"id" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "lineup_entries_pull_idx" ON "lineup_entries" USING btree ("pull_id");--> statement-breakpoint
CREATE INDEX "round_standings_unpaid_idx" ON "round_standings" USING btree ("round_id","position") WHERE "round_standings"."reward_id" is not null and "round_standings"."grant_id" is null;--> statement-breakpoint
ALTER TABLE "job_runs" ADD CONSTRAINT "job_runs_job_check" CHECK ("job_runs"."job" in ('expire-purchases', 'expire-orders', 'reconcile-orders', 'end-quests', 'advance-rounds'));--> statement-breakpoint
ALTER TABLE "events" ADD CONSTRAINT "events_type_check" CHECK ("events"."type" in ('purchase.completed', 'pack.opened', 'wallet.credited', 'wallet.debited', 'order.fulfilled', 'order.refunded', 'pack.published', 'member.added', 'quest.completed', 'reward.granted', 'reward.revoked', 'round.finalized'));