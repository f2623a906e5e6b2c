-- Issue 55 item 5 (round 7): a site's alert acknowledged from the portfolio. The request waits here until the site's box
-- has acknowledged the alert itself: every ingest answer to that site carries the requests whose alert the fleet still
-- holds as active (`acknowledgeAlerts`), the box acknowledges each locally, and its next batch brings the alert back
-- acknowledged, which ends the request (docs/fleet.md, "Alerts acknowledged from the fleet"). The alert's time is kept
-- with it: a box re-uses the id of a deleted alert, and a request is for the alert that was asked about, not its id.
CREATE TABLE "alert_ack_requests" (
	"site_id" uuid NOT NULL,
	"alert_id" bigint NOT NULL,
	"alert_occurred_at" timestamp with time zone NOT NULL,
	"user_name" text NOT NULL,
	"requested_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "alert_ack_requests_site_id_alert_id_pk" PRIMARY KEY("site_id","alert_id")
);
--> statement-breakpoint
ALTER TABLE "alert_ack_requests" ADD CONSTRAINT "alert_ack_requests_site_id_sites_id_fk" FOREIGN KEY ("site_id") REFERENCES "public"."sites"("id") ON DELETE cascade ON UPDATE no action;
--> statement-breakpoint
-- Retention of raw intervals (round 7): `raw_from` is the first month whose 15-minute intervals the fleet keeps (null:
-- every month). `ems-fleetctl drop-raw` moves it forward (never back) and drops the partitions before it; the ingest
-- then stores no interval before it (the day rows of those months are still stored), and no partition is made for such
-- a month again, so a box re-sending its history cannot re-create a dropped month (src/fleet/retention.ts).
CREATE TABLE "fleet_retention" (
	"id" integer PRIMARY KEY NOT NULL CHECK ("id" = 1),
	"raw_from" date
);
--> statement-breakpoint
INSERT INTO "fleet_retention" ("id", "raw_from") VALUES (1, NULL);
