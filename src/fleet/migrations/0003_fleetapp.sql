-- Issue 55 item 5. The site administration's audit trail: who renamed, revoked, re-admitted a site, chose its box or
-- decided a second box's quarantine, when, and the reason they gave.
CREATE TABLE "site_audit" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"site_id" uuid NOT NULL,
	"at" timestamp with time zone DEFAULT now() NOT NULL,
	"user_name" text NOT NULL,
	"action" text NOT NULL,
	"reason" text,
	"detail" jsonb DEFAULT '{}'::jsonb NOT NULL
);
--> statement-breakpoint
ALTER TABLE "site_audit" ADD CONSTRAINT "site_audit_site_id_sites_id_fk" FOREIGN KEY ("site_id") REFERENCES "public"."sites"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "site_audit_site_at" ON "site_audit" USING btree ("site_id","id");
