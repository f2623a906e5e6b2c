-- Issue 55 (round 8, fleetpages): the portfolio's pages read only their own rows at 5,000 sites.
-- EUI: each site's all-fuels kWh (water left out) over the 12 complete months before `eui_month` (`eui_kwh`; null: no
-- sums at all) and the 12 before (`eui_kwh_prev`; null: no month of them), kept beside `site_eui` by the ingest in the
-- same statements (refreshSiteEui). `eui` (kWh/m²·a) follows the floor area by itself, and the ranking's order is an
-- index, so a page is an index range scan of its rows instead of a ranking of every site.
ALTER TABLE "sites" ADD COLUMN "eui_kwh" double precision;--> statement-breakpoint
ALTER TABLE "sites" ADD COLUMN "eui_kwh_prev" double precision;--> statement-breakpoint
ALTER TABLE "sites" ADD COLUMN "eui" double precision GENERATED ALWAYS AS ("eui_kwh" / NULLIF("floor_area_m2", 0)) STORED;--> statement-breakpoint
CREATE INDEX "sites_eui_rank" ON "sites" USING btree ("eui" DESC NULLS LAST, "name", "id") WHERE "revoked_at" IS NULL;--> statement-breakpoint
UPDATE "sites" s SET "eui_kwh" = a.total, "eui_kwh_prev" = a.total_prev
FROM (
	SELECT e.site_id,
		coalesce(sum(e.cur) FILTER (WHERE e.commodity <> 'water'), 0) AS total,
		CASE WHEN bool_or(e.prev IS NOT NULL) FILTER (WHERE e.commodity <> 'water')
			THEN coalesce(sum(e.prev) FILTER (WHERE e.commodity <> 'water'), 0) END AS total_prev
	FROM "site_eui" e GROUP BY e.site_id
) a WHERE s.id = a.site_id;--> statement-breakpoint
-- Health: what the grade is judged on, on the site's own row, so ranking the list is one scan of `sites` with no join
-- and no JSON: the open site-clock alarm (kept by the ingest in the statement that raises or clears it), the last good
-- backup the box reported (from `health`), and yesterday's completeness as judged at the site's last batch
-- (`yday_ok` for the UTC day `yday_on`; a page on another day counts it from site_day_counts as before).
ALTER TABLE "sites" ADD COLUMN "clock_alarm" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "sites" ADD COLUMN "last_backup_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "sites" ADD COLUMN "yday_on" date;--> statement-breakpoint
ALTER TABLE "sites" ADD COLUMN "yday_ok" boolean;--> statement-breakpoint
UPDATE "sites" s SET
	"clock_alarm" = EXISTS (SELECT 1 FROM "fleet_alarms" a WHERE a.site_id = s.id AND a.kind = 'site_clock' AND a.cleared_at IS NULL),
	"last_backup_at" = (s.health->>'lastBackupAt')::timestamptz;
