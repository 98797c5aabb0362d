CREATE TABLE "dashboard_counted" (
	"event_id" bigint PRIMARY KEY NOT NULL
);
--> statement-breakpoint
CREATE TABLE "dashboard_fan_hours" (
	"team_id" text NOT NULL,
	"user_id" text NOT NULL,
	"hours" timestamp (3) with time zone[] NOT NULL,
	CONSTRAINT "dashboard_fan_hours_team_id_user_id_pk" PRIMARY KEY("team_id","user_id")
);
--> statement-breakpoint
CREATE TABLE "dashboard_hours" (
	"team_id" text NOT NULL,
	"hour" timestamp (3) with time zone NOT NULL,
	"pack_id" text NOT NULL,
	"packs_sold" bigint DEFAULT 0 NOT NULL,
	"coins_taken" bigint DEFAULT 0 NOT NULL,
	"packs_opened" bigint DEFAULT 0 NOT NULL,
	"pulls_common" bigint DEFAULT 0 NOT NULL,
	"pulls_uncommon" bigint DEFAULT 0 NOT NULL,
	"pulls_rare" bigint DEFAULT 0 NOT NULL,
	"pulls_epic" bigint DEFAULT 0 NOT NULL,
	"pulls_legendary" bigint DEFAULT 0 NOT NULL,
	"quest_completions" bigint DEFAULT 0 NOT NULL,
	"grants" bigint DEFAULT 0 NOT NULL,
	"league_entries" bigint DEFAULT 0 NOT NULL,
	CONSTRAINT "dashboard_hours_team_id_hour_pack_id_pk" PRIMARY KEY("team_id","hour","pack_id"),
	CONSTRAINT "dashboard_hours_hour_check" CHECK (extract(epoch from "dashboard_hours"."hour") % 3600 = 0)
);
--> statement-breakpoint
CREATE TABLE "dashboard_pack_draws" (
	"pack_id" text NOT NULL,
	"collectible_id" text NOT NULL,
	"team_id" text NOT NULL,
	"draws" bigint DEFAULT 0 NOT NULL,
	CONSTRAINT "dashboard_pack_draws_pack_id_collectible_id_pk" PRIMARY KEY("pack_id","collectible_id")
);
--> statement-breakpoint
CREATE INDEX "dashboard_pack_draws_team_idx" ON "dashboard_pack_draws" USING btree ("team_id");