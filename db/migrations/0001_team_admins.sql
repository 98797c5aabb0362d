CREATE TABLE "team_admins" (
	"team_id" text NOT NULL,
	"user_id" text NOT NULL,
	"role" text NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"added_by" text NOT NULL,
	CONSTRAINT "team_admins_team_id_user_id_pk" PRIMARY KEY("team_id","user_id"),
	CONSTRAINT "team_admins_role_check" CHECK ("team_admins"."role" in ('owner', 'editor', 'viewer'))
);
--> statement-breakpoint
ALTER TABLE "team_admins" ADD CONSTRAINT "team_admins_team_id_teams_id_fk" FOREIGN KEY ("team_id") REFERENCES "public"."teams"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "team_admins" ADD CONSTRAINT "team_admins_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "team_admins_user_idx" ON "team_admins" USING btree ("user_id");--> statement-breakpoint
CREATE INDEX "teams_created_idx" ON "teams" USING btree ("created_at" DESC NULLS LAST,"id" DESC NULLS LAST);--> statement-breakpoint
ALTER TABLE "teams" ADD CONSTRAINT "teams_slug_check" CHECK ("teams"."slug" ~ '^[a-z0-9]+(-[a-z0-9]+)*$');