CREATE TABLE "identities" (
	"provider" text NOT NULL,
	"provider_subject" text NOT NULL,
	"user_id" text NOT NULL,
	"email" text,
	"email_verified" boolean,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"last_sign_in_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "identities_provider_provider_subject_pk" PRIMARY KEY("provider","provider_subject"),
	CONSTRAINT "identities_provider_check" CHECK ("identities"."provider" in ('apple', 'google'))
);
--> statement-breakpoint
CREATE TABLE "refresh_tokens" (
	"token_hash" text PRIMARY KEY NOT NULL,
	"session_id" text NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"used_at" timestamp (3) with time zone,
	"successor_hash" text,
	"successor_sealed" text,
	CONSTRAINT "refresh_tokens_successor_check" CHECK (("refresh_tokens"."used_at" is null) = ("refresh_tokens"."successor_hash" is null) and ("refresh_tokens"."successor_hash" is null) = ("refresh_tokens"."successor_sealed" is null))
);
--> statement-breakpoint
CREATE TABLE "revoked_tokens" (
	"key" text PRIMARY KEY NOT NULL,
	"user_id" text NOT NULL,
	"expires_at" timestamp (3) with time zone NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "sessions" (
	"id" text PRIMARY KEY NOT NULL,
	"user_id" text NOT NULL,
	"provider" text,
	"user_agent" text,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"last_used_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"expires_at" timestamp (3) with time zone NOT NULL,
	"revoked_at" timestamp (3) with time zone,
	"revoked_reason" text,
	CONSTRAINT "sessions_revoked_check" CHECK (("sessions"."revoked_at" is null) = ("sessions"."revoked_reason" is null)),
	CONSTRAINT "sessions_reason_check" CHECK ("sessions"."revoked_reason" in ('logout', 'logout_all', 'revoked', 'ended_by_user', 'refresh_reuse', 'account_deleted'))
);
--> statement-breakpoint
ALTER TABLE "users" ADD COLUMN "deleted_at" timestamp (3) with time zone;--> statement-breakpoint
ALTER TABLE "identities" ADD CONSTRAINT "identities_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "refresh_tokens" ADD CONSTRAINT "refresh_tokens_session_id_sessions_id_fk" FOREIGN KEY ("session_id") REFERENCES "public"."sessions"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "sessions" ADD CONSTRAINT "sessions_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "identities_user_idx" ON "identities" USING btree ("user_id");--> statement-breakpoint
CREATE INDEX "refresh_tokens_session_idx" ON "refresh_tokens" USING btree ("session_id");--> statement-breakpoint
CREATE INDEX "revoked_tokens_expires_idx" ON "revoked_tokens" USING btree ("expires_at");--> statement-breakpoint
CREATE INDEX "sessions_user_live_idx" ON "sessions" USING btree ("user_id") WHERE "sessions"."revoked_at" is null;--> statement-breakpoint
CREATE INDEX "sessions_revoked_idx" ON "sessions" USING btree ("revoked_at") WHERE "sessions"."revoked_at" is not null;