CREATE TABLE "audit_log" (
	"id" text PRIMARY KEY NOT NULL,
	"actor_id" text NOT NULL,
	"action" text NOT NULL,
	"target_type" text NOT NULL,
	"target_id" text NOT NULL,
	"team_id" text,
	"before" jsonb,
	"after" jsonb,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "collectibles" (
	"id" text PRIMARY KEY NOT NULL,
	"team_id" text,
	"name" text NOT NULL,
	"description" text DEFAULT '' NOT NULL,
	"image_url" text,
	"rarity" text DEFAULT 'common' NOT NULL,
	"points" integer DEFAULT 0 NOT NULL,
	"minted" integer DEFAULT 0 NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "collectibles_rarity_check" CHECK ("collectibles"."rarity" in ('common', 'uncommon', 'rare', 'epic', 'legendary')),
	CONSTRAINT "collectibles_points_check" CHECK ("collectibles"."points" >= 0),
	CONSTRAINT "collectibles_minted_check" CHECK ("collectibles"."minted" >= 0)
);
--> statement-breakpoint
CREATE TABLE "pack_pool_entries" (
	"pack_id" text NOT NULL,
	"collectible_id" text NOT NULL,
	"weight" double precision DEFAULT 1 NOT NULL,
	"remaining" integer NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "pack_pool_entries_pack_id_collectible_id_pk" PRIMARY KEY("pack_id","collectible_id"),
	CONSTRAINT "pack_pool_entries_weight_check" CHECK ("pack_pool_entries"."weight" > 0 and "pack_pool_entries"."weight" <= 1000000),
	CONSTRAINT "pack_pool_entries_remaining_check" CHECK ("pack_pool_entries"."remaining" >= 0)
);
--> statement-breakpoint
CREATE TABLE "packs" (
	"id" text PRIMARY KEY NOT NULL,
	"team_id" text,
	"name" text NOT NULL,
	"description" text DEFAULT '' NOT NULL,
	"image_url" text,
	"status" text DEFAULT 'draft' NOT NULL,
	"price" integer DEFAULT 0 NOT NULL,
	"cards_per_pack" integer DEFAULT 5 NOT NULL,
	"supply" integer,
	"published_at" timestamp (3) with time zone,
	"archived_at" timestamp (3) with time zone,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "packs_status_check" CHECK ("packs"."status" in ('draft', 'active', 'archived')),
	CONSTRAINT "packs_price_check" CHECK ("packs"."price" >= 0),
	CONSTRAINT "packs_cards_per_pack_check" CHECK ("packs"."cards_per_pack" between 1 and 100),
	CONSTRAINT "packs_supply_check" CHECK ("packs"."supply" is null or "packs"."supply" >= 1)
);
--> statement-breakpoint
CREATE TABLE "teams" (
	"id" text PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"slug" text NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "teams_slug_unique" UNIQUE("slug")
);
--> statement-breakpoint
CREATE TABLE "users" (
	"id" text PRIMARY KEY NOT NULL,
	"display_name" text NOT NULL,
	"role" text DEFAULT 'user' NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"last_seen_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "users_role_check" CHECK ("users"."role" in ('user', 'admin')),
	CONSTRAINT "users_id_length_check" CHECK (char_length("users"."id") between 1 and 255)
);
--> statement-breakpoint
ALTER TABLE "collectibles" ADD CONSTRAINT "collectibles_team_id_teams_id_fk" FOREIGN KEY ("team_id") REFERENCES "public"."teams"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "pack_pool_entries" ADD CONSTRAINT "pack_pool_entries_pack_id_packs_id_fk" FOREIGN KEY ("pack_id") REFERENCES "public"."packs"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "pack_pool_entries" ADD CONSTRAINT "pack_pool_entries_collectible_id_collectibles_id_fk" FOREIGN KEY ("collectible_id") REFERENCES "public"."collectibles"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "packs" ADD CONSTRAINT "packs_team_id_teams_id_fk" FOREIGN KEY ("team_id") REFERENCES "public"."teams"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "audit_log_created_idx" ON "audit_log" USING btree ("created_at" DESC NULLS LAST,"id" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "audit_log_team_created_idx" ON "audit_log" USING btree ("team_id","created_at" DESC NULLS LAST,"id" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "audit_log_target_created_idx" ON "audit_log" USING btree ("target_id","created_at" DESC NULLS LAST,"id" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "collectibles_team_created_idx" ON "collectibles" USING btree ("team_id","created_at" DESC NULLS LAST,"id" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "collectibles_created_idx" ON "collectibles" USING btree ("created_at" DESC NULLS LAST,"id" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "pack_pool_entries_collectible_idx" ON "pack_pool_entries" USING btree ("collectible_id");--> statement-breakpoint
CREATE INDEX "packs_active_published_idx" ON "packs" USING btree ("published_at" DESC NULLS LAST,"id" DESC NULLS LAST) WHERE "packs"."status" = 'active';--> statement-breakpoint
CREATE INDEX "packs_active_team_published_idx" ON "packs" USING btree ("team_id","published_at" DESC NULLS LAST,"id" DESC NULLS LAST) WHERE "packs"."status" = 'active';--> statement-breakpoint
CREATE INDEX "packs_admin_list_idx" ON "packs" USING btree ("created_at" DESC NULLS LAST,"id" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "packs_team_created_idx" ON "packs" USING btree ("team_id","created_at" DESC NULLS LAST,"id" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "users_role_idx" ON "users" USING btree ("role");