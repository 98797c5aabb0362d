ALTER TABLE "packs" ADD COLUMN "reserved" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
-- Reservations past their expiry held nothing already: mark them, so that the kept count starts
-- from the live ones (each of which was made within the supply).
UPDATE "purchases" SET "status" = 'expired', "ended_at" = clock_timestamp() WHERE "status" = 'pending' AND "expires_at" <= clock_timestamp();--> statement-breakpoint
UPDATE "packs" p SET "reserved" = c.pending FROM (SELECT "pack_id", count(*)::integer AS pending FROM "purchases" WHERE "status" = 'pending' GROUP BY "pack_id") c WHERE c."pack_id" = p."id";--> statement-breakpoint
ALTER TABLE "packs" ADD CONSTRAINT "packs_reserved_check" CHECK ("packs"."reserved" >= 0 and ("packs"."supply" is null or "packs"."sold" + "packs"."reserved" <= "packs"."supply"));
