-- Day rows and month rollups clustered by day (month) first: the rows one write touches (every meter's today) then sit
-- together in a few pages instead of one page per meter; an index by meter keeps one meter's range a key range.
CREATE TABLE `__new_meter_days` (
	`meter_id` integer NOT NULL,
	`day` text NOT NULL,
	`kwh` blob NOT NULL,
	`flags` blob NOT NULL,
	`max_kw` blob,
	`total_kwh` real NOT NULL,
	`cost` real NOT NULL,
	`carbon_kg` real NOT NULL,
	`peak_kw` real,
	`peak_index` integer,
	PRIMARY KEY(`day`, `meter_id`),
	FOREIGN KEY (`meter_id`) REFERENCES `meters`(`id`) ON UPDATE no action ON DELETE cascade
) WITHOUT ROWID;
--> statement-breakpoint
INSERT INTO `__new_meter_days` SELECT `meter_id`, `day`, `kwh`, `flags`, `max_kw`, `total_kwh`, `cost`, `carbon_kg`, `peak_kw`, `peak_index` FROM `meter_days` ORDER BY `day`, `meter_id`;
--> statement-breakpoint
DROP TABLE `meter_days`;
--> statement-breakpoint
ALTER TABLE `__new_meter_days` RENAME TO `meter_days`;
--> statement-breakpoint
CREATE INDEX `meter_days_meter_day` ON `meter_days` (`meter_id`, `day`);
--> statement-breakpoint
CREATE TABLE `__new_meter_months` (
	`meter_id` integer NOT NULL,
	`month` text NOT NULL,
	`total_kwh` real NOT NULL,
	`cost` real NOT NULL,
	`carbon_kg` real NOT NULL,
	`peak_kw` real,
	`peak_at` integer,
	PRIMARY KEY(`month`, `meter_id`),
	FOREIGN KEY (`meter_id`) REFERENCES `meters`(`id`) ON UPDATE no action ON DELETE cascade
) WITHOUT ROWID;
--> statement-breakpoint
INSERT INTO `__new_meter_months` SELECT `meter_id`, `month`, `total_kwh`, `cost`, `carbon_kg`, `peak_kw`, `peak_at` FROM `meter_months` ORDER BY `month`, `meter_id`;
--> statement-breakpoint
DROP TABLE `meter_months`;
--> statement-breakpoint
ALTER TABLE `__new_meter_months` RENAME TO `meter_months`;
--> statement-breakpoint
CREATE INDEX `meter_months_meter_month` ON `meter_months` (`meter_id`, `month`);
