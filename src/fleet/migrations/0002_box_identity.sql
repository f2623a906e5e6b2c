-- Issue 55. The box's own name beside the site's name at the fleet (the enrolment name stays the site's name), and
-- the install id of the one box that is the site (a second box with the same credential is refused until an admin
-- says which box is the site). The cursor now keeps the end of the last batch stored (its `through`), not its start.
ALTER TABLE "sites" ADD COLUMN "box_name" text;--> statement-breakpoint
ALTER TABLE "sites" ADD COLUMN "install_id" text;
