-- The one-time set-up link (issue 53): the first admin sets a password without reading the password file. Only the
-- link's SHA-256 is kept; used_at set once (single use), expires_at bounds it.
CREATE TABLE `setup_links` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`user_id` integer NOT NULL,
	`token_hash` text NOT NULL,
	`created_at` integer NOT NULL,
	`expires_at` integer NOT NULL,
	`used_at` integer,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `setup_links_hash_unique` ON `setup_links` (`token_hash`);
