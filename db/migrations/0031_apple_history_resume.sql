ALTER TABLE "apple_history_cursor" ALTER COLUMN "read_until" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "apple_history_cursor" ADD COLUMN "attempted_at" timestamp (3) with time zone;--> statement-breakpoint
ALTER TABLE "apple_history_cursor" ADD COLUMN "resume_start" timestamp (3) with time zone;--> statement-breakpoint
ALTER TABLE "apple_history_cursor" ADD COLUMN "resume_end" timestamp (3) with time zone;--> statement-breakpoint
ALTER TABLE "apple_history_cursor" ADD COLUMN "resume_token" text;