CREATE TABLE "app_config" (
	"id" text PRIMARY KEY NOT NULL,
	"document" jsonb NOT NULL,
	"version" integer NOT NULL,
	"updated_by" text,
	"updated_at" timestamp (3) with time zone,
	CONSTRAINT "app_config_single_row" CHECK ("app_config"."id" = 'app'),
	CONSTRAINT "app_config_version_check" CHECK ("app_config"."version" >= 0)
);
