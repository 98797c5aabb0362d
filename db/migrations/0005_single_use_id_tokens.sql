CREATE TABLE "id_token_uses" (
	"token_hash" text PRIMARY KEY NOT NULL,
	"expires_at" timestamp (3) with time zone NOT NULL
);
--> statement-breakpoint
CREATE INDEX "id_token_uses_expires_idx" ON "id_token_uses" USING btree ("expires_at");