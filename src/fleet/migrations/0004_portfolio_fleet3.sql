-- Issue 55 (fleet3): the portfolio's pages at 5,000 sites. Yesterday's interval counts by day (the health ranking joins
-- them for every site in one hash join instead of one lookup per site), the open alerts and the open fleet alarms by
-- time (the alert list's page is the top of two index scans, not a sort of every open alert), and each site's EUI sums
-- (the last 12 complete months and the 12 before, per commodity) kept by the ingest for the month named in
-- `sites.eui_month`, so the ranking reads two rows per site instead of aggregating 24 monthly totals per commodity.
CREATE INDEX "site_day_counts_day" ON "site_day_counts" USING btree ("day");--> statement-breakpoint
DROP INDEX IF EXISTS "site_alerts_open";--> statement-breakpoint
CREATE INDEX "site_alerts_open_time" ON "site_alerts" USING btree ("occurred_at" DESC, "site_id", "alert_id") WHERE "status" <> 'resolved';--> statement-breakpoint
CREATE INDEX "fleet_alarms_open_time" ON "fleet_alarms" USING btree ("raised_at" DESC) WHERE "cleared_at" IS NULL;--> statement-breakpoint
CREATE TABLE "site_eui" (
	"site_id" uuid NOT NULL REFERENCES "sites"("id") ON DELETE CASCADE,
	"commodity" text NOT NULL,
	"cur" double precision NOT NULL,
	"prev" double precision,
	CONSTRAINT "site_eui_site_id_commodity_pk" PRIMARY KEY("site_id","commodity")
);--> statement-breakpoint
ALTER TABLE "sites" ADD COLUMN "eui_month" date;
