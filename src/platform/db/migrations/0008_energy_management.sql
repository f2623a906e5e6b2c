ALTER TABLE `tariff_versions` ADD `demand_charge_per_kw` real DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `tariff_versions` ADD `demand_charge_basis` text DEFAULT 'monthly_peak' NOT NULL;--> statement-breakpoint
ALTER TABLE `tariff_versions` ADD `demand_charge_minimum_kw` real DEFAULT 0 NOT NULL;--> statement-breakpoint
CREATE TABLE `peak_warnings` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`window_start` integer NOT NULL,
	`warned_at` integer NOT NULL,
	`projected_kw` real NOT NULL,
	`limit_kw` real NOT NULL,
	`crossed_at` integer,
	`final_kw` real,
	`alert_key` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `peak_warnings_window_unique` ON `peak_warnings` (`window_start`);--> statement-breakpoint
CREATE TABLE `area_floor_areas` (
	`area` text PRIMARY KEY NOT NULL,
	`floor_area_m2` real NOT NULL,
	`updated_at` text NOT NULL
);
--> statement-breakpoint
CREATE TABLE `enpi_drivers` (
	`name` text NOT NULL,
	`month` text NOT NULL,
	`value` real NOT NULL,
	`unit` text DEFAULT '' NOT NULL,
	`updated_at` text NOT NULL,
	PRIMARY KEY(`name`, `month`)
);
--> statement-breakpoint
CREATE TABLE `outdoor_days` (
	`code` text NOT NULL,
	`day` text NOT NULL,
	`hourly_c` blob NOT NULL,
	`samples` integer NOT NULL,
	PRIMARY KEY(`code`, `day`)
);
