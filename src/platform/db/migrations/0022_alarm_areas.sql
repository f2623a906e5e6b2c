CREATE TABLE `alarm_areas` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`code` text NOT NULL,
	`match` text NOT NULL,
	`area` text NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `alarm_areas_code_match_unique` ON `alarm_areas` (`code`,`match`);