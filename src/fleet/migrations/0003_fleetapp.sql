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
--> statement-breakpoint
-- Fleet users with passwords (bcrypt, the box's lockout rules), single sign-on (the issuer's subject) and invitations;
-- sessions made by a sign-in. The printed token stays (the bootstrap of the first admin).
ALTER TABLE "fleet_users" ALTER COLUMN "token_hash" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "fleet_users" ADD COLUMN "email" text;--> statement-breakpoint
ALTER TABLE "fleet_users" ADD COLUMN "password_hash" text;--> statement-breakpoint
ALTER TABLE "fleet_users" ADD COLUMN "oidc_subject" text;--> statement-breakpoint
ALTER TABLE "fleet_users" ADD COLUMN "invitation_hash" text;--> statement-breakpoint
ALTER TABLE "fleet_users" ADD COLUMN "invitation_expires_at" timestamp with time zone;--> statement-breakpoint
CREATE UNIQUE INDEX "fleet_users_email_unique" ON "fleet_users" USING btree (lower("email"));--> statement-breakpoint
CREATE UNIQUE INDEX "fleet_users_oidc_subject_unique" ON "fleet_users" USING btree ("oidc_subject");--> statement-breakpoint
CREATE UNIQUE INDEX "fleet_users_invitation_unique" ON "fleet_users" USING btree ("invitation_hash");--> statement-breakpoint
CREATE TABLE "fleet_sessions" (
	"token_hash" text PRIMARY KEY NOT NULL,
	"user_id" bigint NOT NULL,
	"expires_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "fleet_sessions" ADD CONSTRAINT "fleet_sessions_user_id_fleet_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."fleet_users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE TABLE "fleet_login_throttle" (
	"key" text PRIMARY KEY NOT NULL,
	"failures" integer NOT NULL,
	"window_started_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "fleet_sso_requests" (
	"state" text PRIMARY KEY NOT NULL,
	"code_verifier" text NOT NULL,
	"nonce" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
