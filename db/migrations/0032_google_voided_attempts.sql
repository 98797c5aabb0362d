ALTER TABLE "google_play_sync" ALTER COLUMN "synced_until" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "google_play_sync" ADD COLUMN "attempted_at" timestamp (3) with time zone;