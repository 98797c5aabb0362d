CREATE TABLE "quest_events_counted" (
	"quest_id" text NOT NULL,
	"user_id" text NOT NULL,
	"event_id" bigint NOT NULL,
	CONSTRAINT "quest_events_counted_quest_id_user_id_event_id_pk" PRIMARY KEY("quest_id","user_id","event_id")
);
--> statement-breakpoint
CREATE TABLE "quest_progress" (
	"quest_id" text NOT NULL,
	"user_id" text NOT NULL,
	"period" text NOT NULL,
	"state" jsonb NOT NULL,
	"progress" integer DEFAULT 0 NOT NULL,
	"target" integer NOT NULL,
	"completed_at" timestamp (3) with time zone,
	"claimed_at" timestamp (3) with time zone,
	"grant_id" text,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "quest_progress_quest_id_user_id_period_pk" PRIMARY KEY("quest_id","user_id","period"),
	CONSTRAINT "quest_progress_claim_check" CHECK (("quest_progress"."claimed_at" is null) = ("quest_progress"."grant_id" is null)),
	CONSTRAINT "quest_progress_claimed_completed_check" CHECK ("quest_progress"."claimed_at" is null or "quest_progress"."completed_at" is not null)
);
--> statement-breakpoint
CREATE TABLE "quests" (
	"id" text PRIMARY KEY NOT NULL,
	"team_id" text,
	"name" text NOT NULL,
	"description" text DEFAULT '' NOT NULL,
	"status" text DEFAULT 'draft' NOT NULL,
	"criteria" jsonb NOT NULL,
	"period" text DEFAULT 'once' NOT NULL,
	"time_zone" text DEFAULT 'UTC' NOT NULL,
	"starts_at" timestamp (3) with time zone NOT NULL,
	"ends_at" timestamp (3) with time zone,
	"reward_id" text NOT NULL,
	"max_completions" integer,
	"completions" integer DEFAULT 0 NOT NULL,
	"created_by" text NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"published_at" timestamp (3) with time zone,
	"ended_at" timestamp (3) with time zone,
	CONSTRAINT "quests_status_check" CHECK ("quests"."status" in ('draft', 'active', 'ended')),
	CONSTRAINT "quests_period_check" CHECK ("quests"."period" in ('once', 'daily', 'weekly')),
	CONSTRAINT "quests_completions_check" CHECK ("quests"."completions" >= 0 and ("quests"."max_completions" is null or ("quests"."max_completions" >= 1 and "quests"."completions" <= "quests"."max_completions"))),
	CONSTRAINT "quests_window_check" CHECK ("quests"."ends_at" is null or "quests"."ends_at" > "quests"."starts_at")
);
--> statement-breakpoint
ALTER TABLE "job_runs" DROP CONSTRAINT "job_runs_job_check";--> statement-breakpoint
ALTER TABLE "quest_progress" ADD CONSTRAINT "quest_progress_quest_id_quests_id_fk" FOREIGN KEY ("quest_id") REFERENCES "public"."quests"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "quest_progress" ADD CONSTRAINT "quest_progress_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "quest_progress" ADD CONSTRAINT "quest_progress_grant_id_grants_id_fk" FOREIGN KEY ("grant_id") REFERENCES "public"."grants"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "quests" ADD CONSTRAINT "quests_team_id_teams_id_fk" FOREIGN KEY ("team_id") REFERENCES "public"."teams"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "quests" ADD CONSTRAINT "quests_reward_id_rewards_id_fk" FOREIGN KEY ("reward_id") REFERENCES "public"."rewards"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "quest_progress_user_idx" ON "quest_progress" USING btree ("user_id","quest_id","updated_at" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "quests_active_idx" ON "quests" USING btree ("published_at" DESC NULLS LAST,"id" DESC NULLS LAST) WHERE "quests"."status" = 'active';--> statement-breakpoint
CREATE INDEX "quests_admin_list_idx" ON "quests" USING btree ("created_at" DESC NULLS LAST,"id" DESC NULLS LAST);--> statement-breakpoint
ALTER TABLE "job_runs" ADD CONSTRAINT "job_runs_job_check" CHECK ("job_runs"."job" in ('expire-purchases', 'expire-orders', 'reconcile-orders', 'end-quests'));