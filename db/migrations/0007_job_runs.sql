CREATE TABLE "job_leases" (
	"job" text PRIMARY KEY NOT NULL,
	"run_id" text NOT NULL,
	"expires_at" timestamp (3) with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "job_runs" (
	"id" text PRIMARY KEY NOT NULL,
	"job" text NOT NULL,
	"trigger" text NOT NULL,
	"started_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"finished_at" timestamp (3) with time zone,
	"processed" integer,
	"outcome" text,
	"error" text,
	CONSTRAINT "job_runs_job_check" CHECK ("job_runs"."job" in ('expire-purchases')),
	CONSTRAINT "job_runs_outcome_check" CHECK ("job_runs"."outcome" in ('ok', 'failed')),
	CONSTRAINT "job_runs_finished_check" CHECK (("job_runs"."finished_at" is null) = ("job_runs"."outcome" is null))
);
--> statement-breakpoint
CREATE INDEX "job_runs_job_idx" ON "job_runs" USING btree ("job","started_at");