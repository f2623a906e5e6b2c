CREATE TABLE "day_rollups" (
	"site_id" uuid NOT NULL,
	"meter_key" text NOT NULL,
	"day" date NOT NULL,
	"value" double precision NOT NULL,
	"cost" double precision NOT NULL,
	"carbon_kg" double precision NOT NULL,
	"seq" bigint NOT NULL,
	CONSTRAINT "day_rollups_site_id_meter_key_day_pk" PRIMARY KEY("site_id","meter_key","day")
);
--> statement-breakpoint
CREATE TABLE "enrolment_codes" (
	"code_hash" text PRIMARY KEY NOT NULL,
	"site_name" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"used_at" timestamp with time zone,
	"site_id" uuid
);
--> statement-breakpoint
CREATE TABLE "fleet_alarms" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"site_id" uuid NOT NULL,
	"kind" text NOT NULL,
	"message" text NOT NULL,
	"raised_at" timestamp with time zone DEFAULT now() NOT NULL,
	"cleared_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "fleet_user_sites" (
	"user_id" bigint NOT NULL,
	"site_id" uuid NOT NULL,
	CONSTRAINT "fleet_user_sites_user_id_site_id_pk" PRIMARY KEY("user_id","site_id")
);
--> statement-breakpoint
CREATE TABLE "fleet_users" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"role" text NOT NULL,
	"token_hash" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "fleet_users_name_unique" UNIQUE("name"),
	CONSTRAINT "fleet_users_token_hash_unique" UNIQUE("token_hash")
);
--> statement-breakpoint
CREATE TABLE "intervals" (
	"site_id" uuid NOT NULL,
	"meter_key" text NOT NULL,
	"start" timestamp with time zone NOT NULL,
	"value" double precision NOT NULL,
	"quality" text NOT NULL,
	"seq" bigint NOT NULL,
	CONSTRAINT "intervals_site_id_meter_key_start_pk" PRIMARY KEY("site_id","meter_key","start")
) PARTITION BY RANGE ("start");
-- Edited by hand: drizzle-kit cannot declare partitioning. One partition per UTC month, made on demand by the fleet
-- (src/fleet/partitions.ts) before a batch writes into it; the primary key includes "start", as partitioning requires.
--> statement-breakpoint
CREATE TABLE "quarantined_intervals" (
	"site_id" uuid NOT NULL,
	"meter_key" text NOT NULL,
	"start" timestamp with time zone NOT NULL,
	"value" double precision NOT NULL,
	"quality" text NOT NULL,
	"seq" bigint NOT NULL,
	"received_at" timestamp with time zone DEFAULT now() NOT NULL,
	"site_sent_at" timestamp with time zone NOT NULL,
	CONSTRAINT "quarantined_intervals_site_id_meter_key_start_pk" PRIMARY KEY("site_id","meter_key","start")
);
--> statement-breakpoint
CREATE TABLE "site_alerts" (
	"site_id" uuid NOT NULL,
	"alert_id" bigint NOT NULL,
	"title" text NOT NULL,
	"level" text NOT NULL,
	"status" text NOT NULL,
	"occurred_at" timestamp with time zone NOT NULL,
	"acknowledged_at" timestamp with time zone,
	"resolved_at" timestamp with time zone,
	"seq" bigint NOT NULL,
	CONSTRAINT "site_alerts_site_id_alert_id_pk" PRIMARY KEY("site_id","alert_id")
);
--> statement-breakpoint
CREATE TABLE "site_areas" (
	"site_id" uuid NOT NULL,
	"name" text NOT NULL,
	"floor_area_m2" double precision,
	CONSTRAINT "site_areas_site_id_name_pk" PRIMARY KEY("site_id","name")
);
--> statement-breakpoint
CREATE TABLE "site_day_counts" (
	"site_id" uuid NOT NULL,
	"day" date NOT NULL,
	"rows" integer NOT NULL,
	CONSTRAINT "site_day_counts_site_id_day_pk" PRIMARY KEY("site_id","day")
);
--> statement-breakpoint
CREATE TABLE "site_meters" (
	"site_id" uuid NOT NULL,
	"key" text NOT NULL,
	"name" text NOT NULL,
	"commodity" text NOT NULL,
	"unit" text NOT NULL,
	"area" text,
	"site_total" integer DEFAULT 0 NOT NULL,
	CONSTRAINT "site_meters_site_id_key_pk" PRIMARY KEY("site_id","key")
);
--> statement-breakpoint
CREATE TABLE "site_months" (
	"site_id" uuid NOT NULL,
	"commodity" text NOT NULL,
	"month" date NOT NULL,
	"value" double precision NOT NULL,
	"cost" double precision NOT NULL,
	"carbon_kg" double precision NOT NULL,
	"days" integer NOT NULL,
	CONSTRAINT "site_months_site_id_commodity_month_pk" PRIMARY KEY("site_id","commodity","month")
);
--> statement-breakpoint
CREATE TABLE "sites" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"name" text NOT NULL,
	"timezone" text,
	"floor_area_m2" double precision,
	"credential_hash" text NOT NULL,
	"enrolled_at" timestamp with time zone DEFAULT now() NOT NULL,
	"revoked_at" timestamp with time zone,
	"last_contact_at" timestamp with time zone,
	"site_cursor" bigint DEFAULT 0 NOT NULL,
	"clock_skew_ms" integer,
	"health" jsonb,
	"last_refusal" text,
	"latest_interval_at" timestamp with time zone,
	"meter_count" integer DEFAULT 0 NOT NULL
);
--> statement-breakpoint
ALTER TABLE "enrolment_codes" ADD CONSTRAINT "enrolment_codes_site_id_sites_id_fk" FOREIGN KEY ("site_id") REFERENCES "public"."sites"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "fleet_alarms" ADD CONSTRAINT "fleet_alarms_site_id_sites_id_fk" FOREIGN KEY ("site_id") REFERENCES "public"."sites"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "fleet_user_sites" ADD CONSTRAINT "fleet_user_sites_user_id_fleet_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."fleet_users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "fleet_user_sites" ADD CONSTRAINT "fleet_user_sites_site_id_sites_id_fk" FOREIGN KEY ("site_id") REFERENCES "public"."sites"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "site_areas" ADD CONSTRAINT "site_areas_site_id_sites_id_fk" FOREIGN KEY ("site_id") REFERENCES "public"."sites"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "site_meters" ADD CONSTRAINT "site_meters_site_id_sites_id_fk" FOREIGN KEY ("site_id") REFERENCES "public"."sites"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "day_rollups_day" ON "day_rollups" USING btree ("day");--> statement-breakpoint
CREATE UNIQUE INDEX "fleet_alarms_open" ON "fleet_alarms" USING btree ("site_id","kind") WHERE "fleet_alarms"."cleared_at" is null;--> statement-breakpoint
CREATE INDEX "site_alerts_open" ON "site_alerts" USING btree ("occurred_at") WHERE "site_alerts"."status" <> 'resolved';--> statement-breakpoint
CREATE INDEX "site_alerts_open_by_site" ON "site_alerts" USING btree ("site_id") WHERE "site_alerts"."status" <> 'resolved';--> statement-breakpoint
CREATE UNIQUE INDEX "sites_credential_hash" ON "sites" USING btree ("credential_hash");