CREATE TABLE "idempotency_keys" (
	"user_id" text NOT NULL,
	"route" text NOT NULL,
	"key" text NOT NULL,
	"request_hash" text NOT NULL,
	"status_code" integer NOT NULL,
	"response" jsonb NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "idempotency_keys_user_id_route_key_pk" PRIMARY KEY("user_id","route","key")
);
--> statement-breakpoint
CREATE TABLE "pack_opens" (
	"user_pack_id" text PRIMARY KEY NOT NULL,
	"user_id" text NOT NULL,
	"pack_id" text NOT NULL,
	"result" jsonb NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "pulls" (
	"id" text PRIMARY KEY NOT NULL,
	"user_id" text NOT NULL,
	"user_pack_id" text NOT NULL,
	"pack_id" text NOT NULL,
	"collectible_id" text NOT NULL,
	"draw_index" integer NOT NULL,
	"serial_number" integer NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "pulls_collectible_serial_unique" UNIQUE("collectible_id","serial_number"),
	CONSTRAINT "pulls_user_pack_draw_unique" UNIQUE("user_pack_id","draw_index"),
	CONSTRAINT "pulls_serial_check" CHECK ("pulls"."serial_number" >= 1 and "pulls"."draw_index" >= 0)
);
--> statement-breakpoint
CREATE TABLE "purchases" (
	"id" text PRIMARY KEY NOT NULL,
	"user_id" text NOT NULL,
	"pack_id" text NOT NULL,
	"status" text DEFAULT 'pending' NOT NULL,
	"price" integer NOT NULL,
	"server_seed" text NOT NULL,
	"server_seed_hash" text NOT NULL,
	"client_seed" text,
	"expires_at" timestamp (3) with time zone NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"completed_at" timestamp (3) with time zone,
	"ended_at" timestamp (3) with time zone,
	CONSTRAINT "purchases_status_check" CHECK ("purchases"."status" in ('pending', 'completed', 'cancelled', 'expired')),
	CONSTRAINT "purchases_price_check" CHECK ("purchases"."price" >= 0),
	CONSTRAINT "purchases_seed_check" CHECK ("purchases"."server_seed" ~ '^[0-9a-f]{64}$' and "purchases"."server_seed_hash" ~ '^[0-9a-f]{64}$'),
	CONSTRAINT "purchases_completed_check" CHECK (("purchases"."status" = 'completed') = ("purchases"."completed_at" is not null))
);
--> statement-breakpoint
CREATE TABLE "serial_blocks" (
	"pack_id" text NOT NULL,
	"collectible_id" text NOT NULL,
	"first" integer NOT NULL,
	"count" integer NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "serial_blocks_pack_id_collectible_id_first_pk" PRIMARY KEY("pack_id","collectible_id","first"),
	CONSTRAINT "serial_blocks_range_check" CHECK ("serial_blocks"."first" >= 1 and "serial_blocks"."count" >= 1)
);
--> statement-breakpoint
CREATE TABLE "serial_moves" (
	"pack_id" text NOT NULL,
	"collectible_id" text NOT NULL,
	"place" integer NOT NULL,
	"serial_number" integer NOT NULL,
	CONSTRAINT "serial_moves_pack_id_collectible_id_place_pk" PRIMARY KEY("pack_id","collectible_id","place")
);
--> statement-breakpoint
CREATE TABLE "serial_states" (
	"pack_id" text NOT NULL,
	"collectible_id" text NOT NULL,
	"minted" integer DEFAULT 0 NOT NULL,
	"allocated" integer DEFAULT 0 NOT NULL,
	CONSTRAINT "serial_states_pack_id_collectible_id_pk" PRIMARY KEY("pack_id","collectible_id"),
	CONSTRAINT "serial_states_count_check" CHECK ("serial_states"."minted" >= 0 and "serial_states"."minted" <= "serial_states"."allocated")
);
--> statement-breakpoint
CREATE TABLE "user_packs" (
	"id" text PRIMARY KEY NOT NULL,
	"user_id" text NOT NULL,
	"pack_id" text NOT NULL,
	"purchase_id" text NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"opened_at" timestamp (3) with time zone,
	CONSTRAINT "user_packs_purchase_id_unique" UNIQUE("purchase_id")
);
--> statement-breakpoint
CREATE TABLE "wallet_ledger" (
	"id" text PRIMARY KEY NOT NULL,
	"user_id" text NOT NULL,
	"seq" integer NOT NULL,
	"previous_seq" integer,
	"previous_balance" integer NOT NULL,
	"amount" integer NOT NULL,
	"balance_after" integer NOT NULL,
	"kind" text NOT NULL,
	"reference" text,
	"reason" text,
	"actor_id" text,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "wallet_ledger_user_seq_unique" UNIQUE("user_id","seq"),
	CONSTRAINT "wallet_ledger_user_seq_balance_unique" UNIQUE("user_id","seq","balance_after"),
	CONSTRAINT "wallet_ledger_chain_check" CHECK (("wallet_ledger"."seq" = 1 and "wallet_ledger"."previous_seq" is null and "wallet_ledger"."previous_balance" = 0) or ("wallet_ledger"."seq" > 1 and "wallet_ledger"."previous_seq" = "wallet_ledger"."seq" - 1)),
	CONSTRAINT "wallet_ledger_amount_check" CHECK ("wallet_ledger"."amount" <> 0 and "wallet_ledger"."balance_after" = "wallet_ledger"."previous_balance" + "wallet_ledger"."amount"),
	CONSTRAINT "wallet_ledger_balance_check" CHECK ("wallet_ledger"."balance_after" >= 0),
	CONSTRAINT "wallet_ledger_kind_check" CHECK ("wallet_ledger"."kind" in ('adjustment', 'purchase', 'reward', 'topup', 'refund'))
);
--> statement-breakpoint
CREATE TABLE "wallets" (
	"user_id" text PRIMARY KEY NOT NULL,
	"balance" integer DEFAULT 0 NOT NULL,
	"last_seq" integer,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "wallets_balance_check" CHECK ("wallets"."balance" >= 0 and ("wallets"."last_seq" is not null or "wallets"."balance" = 0))
);
--> statement-breakpoint
ALTER TABLE "collectibles" DROP CONSTRAINT "collectibles_minted_check";--> statement-breakpoint
ALTER TABLE "collectibles" ADD COLUMN "edition_size" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "packs" ADD COLUMN "max_per_user" integer;--> statement-breakpoint
ALTER TABLE "packs" ADD COLUMN "sold" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "packs" ADD COLUMN "opened" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "users" ADD COLUMN "score" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "pack_opens" ADD CONSTRAINT "pack_opens_user_pack_id_user_packs_id_fk" FOREIGN KEY ("user_pack_id") REFERENCES "public"."user_packs"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "pack_opens" ADD CONSTRAINT "pack_opens_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "pack_opens" ADD CONSTRAINT "pack_opens_pack_id_packs_id_fk" FOREIGN KEY ("pack_id") REFERENCES "public"."packs"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "pulls" ADD CONSTRAINT "pulls_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "pulls" ADD CONSTRAINT "pulls_user_pack_id_pack_opens_user_pack_id_fk" FOREIGN KEY ("user_pack_id") REFERENCES "public"."pack_opens"("user_pack_id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "pulls" ADD CONSTRAINT "pulls_pack_id_packs_id_fk" FOREIGN KEY ("pack_id") REFERENCES "public"."packs"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "pulls" ADD CONSTRAINT "pulls_collectible_id_collectibles_id_fk" FOREIGN KEY ("collectible_id") REFERENCES "public"."collectibles"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "purchases" ADD CONSTRAINT "purchases_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "purchases" ADD CONSTRAINT "purchases_pack_id_packs_id_fk" FOREIGN KEY ("pack_id") REFERENCES "public"."packs"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "serial_blocks" ADD CONSTRAINT "serial_blocks_state_fk" FOREIGN KEY ("pack_id","collectible_id") REFERENCES "public"."serial_states"("pack_id","collectible_id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "serial_moves" ADD CONSTRAINT "serial_moves_state_fk" FOREIGN KEY ("pack_id","collectible_id") REFERENCES "public"."serial_states"("pack_id","collectible_id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "serial_states" ADD CONSTRAINT "serial_states_pack_id_packs_id_fk" FOREIGN KEY ("pack_id") REFERENCES "public"."packs"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "serial_states" ADD CONSTRAINT "serial_states_collectible_id_collectibles_id_fk" FOREIGN KEY ("collectible_id") REFERENCES "public"."collectibles"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "user_packs" ADD CONSTRAINT "user_packs_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "user_packs" ADD CONSTRAINT "user_packs_pack_id_packs_id_fk" FOREIGN KEY ("pack_id") REFERENCES "public"."packs"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "user_packs" ADD CONSTRAINT "user_packs_purchase_id_purchases_id_fk" FOREIGN KEY ("purchase_id") REFERENCES "public"."purchases"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "wallet_ledger" ADD CONSTRAINT "wallet_ledger_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "wallet_ledger" ADD CONSTRAINT "wallet_ledger_previous_fk" FOREIGN KEY ("user_id","previous_seq","previous_balance") REFERENCES "public"."wallet_ledger"("user_id","seq","balance_after") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "wallets" ADD CONSTRAINT "wallets_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "wallets" ADD CONSTRAINT "wallets_last_entry_fk" FOREIGN KEY ("user_id","last_seq","balance") REFERENCES "public"."wallet_ledger"("user_id","seq","balance_after") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "idempotency_keys_created_idx" ON "idempotency_keys" USING btree ("created_at");--> statement-breakpoint
CREATE INDEX "pulls_user_created_idx" ON "pulls" USING btree ("user_id","created_at" DESC NULLS LAST,"id" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "purchases_pending_pack_idx" ON "purchases" USING btree ("pack_id","expires_at") WHERE "purchases"."status" = 'pending';--> statement-breakpoint
CREATE INDEX "purchases_pending_expiry_idx" ON "purchases" USING btree ("expires_at") WHERE "purchases"."status" = 'pending';--> statement-breakpoint
CREATE INDEX "purchases_user_pack_idx" ON "purchases" USING btree ("user_id","pack_id") WHERE "purchases"."status" in ('pending', 'completed');--> statement-breakpoint
CREATE INDEX "user_packs_unopened_idx" ON "user_packs" USING btree ("user_id","pack_id","created_at","id") WHERE "user_packs"."opened_at" is null;--> statement-breakpoint
CREATE INDEX "wallet_ledger_user_created_idx" ON "wallet_ledger" USING btree ("user_id","created_at" DESC NULLS LAST,"id" DESC NULLS LAST);--> statement-breakpoint
ALTER TABLE "collectibles" ADD CONSTRAINT "collectibles_minted_check" CHECK ("collectibles"."minted" >= 0 and "collectibles"."minted" <= "collectibles"."edition_size");--> statement-breakpoint
ALTER TABLE "packs" ADD CONSTRAINT "packs_max_per_user_check" CHECK ("packs"."max_per_user" is null or "packs"."max_per_user" >= 1);--> statement-breakpoint
ALTER TABLE "packs" ADD CONSTRAINT "packs_sold_check" CHECK ("packs"."opened" >= 0 and "packs"."opened" <= "packs"."sold" and ("packs"."supply" is null or "packs"."sold" <= "packs"."supply"));--> statement-breakpoint
ALTER TABLE "users" ADD CONSTRAINT "users_score_check" CHECK ("users"."score" >= 0);