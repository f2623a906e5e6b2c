CREATE TABLE `meter_suspect_runs` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`meter_id` integer NOT NULL,
	`start_at` integer NOT NULL,
	`intervals` integer NOT NULL,
	`value` real NOT NULL,
	`source` text NOT NULL,
	`confirmed_at` text,
	`confirmed_by` integer,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`meter_id`) REFERENCES `meters`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `meter_suspect_runs_meter_start` ON `meter_suspect_runs` (`meter_id`,`start_at`);
