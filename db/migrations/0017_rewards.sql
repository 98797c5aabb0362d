CREATE TABLE "grants" (
	"id" text PRIMARY KEY NOT NULL,
	"source_key" text NOT NULL,
	"user_id" text NOT NULL,
	"reward_id" text NOT NULL,
	"promise_key" text,
	"reward" jsonb NOT NULL,
	"status" text DEFAULT 'granted' NOT NULL,
	"reason" text NOT NULL,
	"actor_id" text,
	"proof" jsonb,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"revoked_at" timestamp (3) with time zone,
	"revoked_by" text,
	"revoke_reason" text,
	"coins_taken_back" integer DEFAULT 0 NOT NULL,
	"coins_uncollected" integer DEFAULT 0 NOT NULL,
	"packs_taken_back" integer DEFAULT 0 NOT NULL,
	"packs_kept" integer DEFAULT 0 NOT NULL,
	"collectibles_kept" integer DEFAULT 0 NOT NULL,
	CONSTRAINT "grants_source_key_unique" UNIQUE("source_key"),
	CONSTRAINT "grants_status_check" CHECK ("grants"."status" in ('granted', 'revoked')),
	CONSTRAINT "grants_revoked_check" CHECK (("grants"."status" = 'revoked') = ("grants"."revoked_at" is not null)),
	CONSTRAINT "grants_reversal_check" CHECK ("grants"."coins_taken_back" >= 0 and "grants"."coins_uncollected" >= 0 and "grants"."packs_taken_back" >= 0 and "grants"."packs_kept" >= 0 and "grants"."collectibles_kept" >= 0)
);
--> statement-breakpoint
CREATE TABLE "reward_promises" (
	"key" text PRIMARY KEY NOT NULL,
	"reward_id" text NOT NULL,
	"count" integer NOT NULL,
	"granted" integer DEFAULT 0 NOT NULL,
	"released" integer DEFAULT 0 NOT NULL,
	"released_at" timestamp (3) with time zone,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "reward_promises_count_check" CHECK ("reward_promises"."count" >= 1 and "reward_promises"."granted" >= 0 and "reward_promises"."released" >= 0 and "reward_promises"."granted" + "reward_promises"."released" <= "reward_promises"."count"),
	CONSTRAINT "reward_promises_released_check" CHECK (("reward_promises"."released_at" is null and "reward_promises"."released" = 0) or ("reward_promises"."released_at" is not null and "reward_promises"."granted" + "reward_promises"."released" = "reward_promises"."count"))
);
--> statement-breakpoint
CREATE TABLE "reward_serials" (
	"owner" text NOT NULL,
	"collectible_id" text NOT NULL,
	"first" integer NOT NULL,
	"size" integer NOT NULL,
	"minted" integer DEFAULT 0 NOT NULL,
	"moved" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"server_seed" text NOT NULL,
	"server_seed_hash" text NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "reward_serials_owner_unique" UNIQUE("owner","collectible_id"),
	CONSTRAINT "reward_serials_range_check" CHECK ("reward_serials"."first" >= 1 and "reward_serials"."size" >= 1 and "reward_serials"."minted" >= 0 and "reward_serials"."minted" <= "reward_serials"."size"),
	CONSTRAINT "reward_serials_seed_check" CHECK ("reward_serials"."server_seed" ~ '^[0-9a-f]{64}$' and "reward_serials"."server_seed_hash" ~ '^[0-9a-f]{64}$')
);
--> statement-breakpoint
CREATE TABLE "rewards" (
	"id" text PRIMARY KEY NOT NULL,
	"team_id" text,
	"name" text NOT NULL,
	"coins" integer DEFAULT 0 NOT NULL,
	"packs" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"collectibles" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"created_by" text,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "rewards_coins_check" CHECK ("rewards"."coins" >= 0)
);
--> statement-breakpoint
ALTER TABLE "packs" DROP CONSTRAINT "packs_sold_check";--> statement-breakpoint
ALTER TABLE "packs" DROP CONSTRAINT "packs_reserved_check";--> statement-breakpoint
ALTER TABLE "wallet_ledger" DROP CONSTRAINT "wallet_ledger_kind_check";--> statement-breakpoint
DROP INDEX "user_packs_unopened_idx";--> statement-breakpoint
ALTER TABLE "pulls" ALTER COLUMN "user_pack_id" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "pulls" ALTER COLUMN "pack_id" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "user_packs" ALTER COLUMN "purchase_id" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "packs" ADD COLUMN "promised" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "packs" ADD COLUMN "granted" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "pulls" ADD COLUMN "grant_id" text;--> statement-breakpoint
ALTER TABLE "user_packs" ADD COLUMN "grant_id" text;--> statement-breakpoint
ALTER TABLE "user_packs" ADD COLUMN "server_seed" text;--> statement-breakpoint
ALTER TABLE "user_packs" ADD COLUMN "server_seed_hash" text;--> statement-breakpoint
ALTER TABLE "user_packs" ADD COLUMN "revoked_at" timestamp (3) with time zone;--> statement-breakpoint
ALTER TABLE "grants" ADD CONSTRAINT "grants_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "grants" ADD CONSTRAINT "grants_reward_id_rewards_id_fk" FOREIGN KEY ("reward_id") REFERENCES "public"."rewards"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "grants" ADD CONSTRAINT "grants_promise_key_reward_promises_key_fk" FOREIGN KEY ("promise_key") REFERENCES "public"."reward_promises"("key") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "reward_promises" ADD CONSTRAINT "reward_promises_reward_id_rewards_id_fk" FOREIGN KEY ("reward_id") REFERENCES "public"."rewards"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "reward_serials" ADD CONSTRAINT "reward_serials_collectible_id_collectibles_id_fk" FOREIGN KEY ("collectible_id") REFERENCES "public"."collectibles"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "rewards" ADD CONSTRAINT "rewards_team_id_teams_id_fk" FOREIGN KEY ("team_id") REFERENCES "public"."teams"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "grants_user_created_idx" ON "grants" USING btree ("user_id","created_at" DESC NULLS LAST,"id" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "grants_reward_idx" ON "grants" USING btree ("reward_id");--> statement-breakpoint
CREATE INDEX "grants_promise_idx" ON "grants" USING btree ("promise_key");--> statement-breakpoint
CREATE INDEX "reward_promises_reward_idx" ON "reward_promises" USING btree ("reward_id");--> statement-breakpoint
CREATE INDEX "rewards_team_created_idx" ON "rewards" USING btree ("team_id","created_at" DESC NULLS LAST,"id" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "rewards_created_idx" ON "rewards" USING btree ("created_at" DESC NULLS LAST,"id" DESC NULLS LAST);--> statement-breakpoint
ALTER TABLE "pulls" ADD CONSTRAINT "pulls_grant_id_grants_id_fk" FOREIGN KEY ("grant_id") REFERENCES "public"."grants"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "user_packs" ADD CONSTRAINT "user_packs_grant_id_grants_id_fk" FOREIGN KEY ("grant_id") REFERENCES "public"."grants"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "user_packs_grant_idx" ON "user_packs" USING btree ("grant_id");--> statement-breakpoint
CREATE INDEX "user_packs_unopened_idx" ON "user_packs" USING btree ("user_id","pack_id","created_at","id") WHERE "user_packs"."opened_at" is null and "user_packs"."revoked_at" is null;--> statement-breakpoint
ALTER TABLE "pulls" ADD CONSTRAINT "pulls_grant_draw_unique" UNIQUE("grant_id","draw_index");--> statement-breakpoint
ALTER TABLE "packs" ADD CONSTRAINT "packs_sold_check" CHECK ("packs"."opened" >= 0 and "packs"."opened" <= "packs"."sold" + "packs"."granted" and ("packs"."supply" is null or "packs"."sold" + "packs"."granted" <= "packs"."supply"));--> statement-breakpoint
ALTER TABLE "packs" ADD CONSTRAINT "packs_reserved_check" CHECK ("packs"."reserved" >= 0 and "packs"."promised" >= 0 and "packs"."granted" >= 0 and ("packs"."supply" is null or "packs"."sold" + "packs"."granted" + "packs"."reserved" + "packs"."promised" <= "packs"."supply"));--> statement-breakpoint
ALTER TABLE "pulls" ADD CONSTRAINT "pulls_origin_check" CHECK (("pulls"."user_pack_id" is not null and "pulls"."pack_id" is not null and "pulls"."grant_id" is null) or ("pulls"."user_pack_id" is null and "pulls"."pack_id" is null and "pulls"."grant_id" is not null));--> statement-breakpoint
ALTER TABLE "user_packs" ADD CONSTRAINT "user_packs_origin_check" CHECK (("user_packs"."purchase_id" is not null and "user_packs"."grant_id" is null and "user_packs"."server_seed" is null and "user_packs"."server_seed_hash" is null)
        or ("user_packs"."purchase_id" is null and "user_packs"."grant_id" is not null and "user_packs"."server_seed" ~ '^[0-9a-f]{64}$' and "user_packs"."server_seed_hash" ~ '^[0-9a-f]{64}$'));--> statement-breakpoint
ALTER TABLE "user_packs" ADD CONSTRAINT "user_packs_revoked_check" CHECK ("user_packs"."revoked_at" is null or ("user_packs"."grant_id" is not null and "user_packs"."opened_at" is null));--> statement-breakpoint
ALTER TABLE "wallet_ledger" ADD CONSTRAINT "wallet_ledger_kind_check" CHECK ("wallet_ledger"."kind" in ('adjustment', 'purchase', 'reward', 'topup', 'refund', 'revocation'));