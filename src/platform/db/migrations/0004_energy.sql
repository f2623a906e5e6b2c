CREATE TABLE `meter_days` (
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
	PRIMARY KEY(`meter_id`, `day`),
	FOREIGN KEY (`meter_id`) REFERENCES `meters`(`id`) ON UPDATE no action ON DELETE cascade
) WITHOUT ROWID;
--> statement-breakpoint
CREATE TABLE `meter_months` (
	`meter_id` integer NOT NULL,
	`month` text NOT NULL,
	`total_kwh` real NOT NULL,
	`cost` real NOT NULL,
	`carbon_kg` real NOT NULL,
	`peak_kw` real,
	`peak_at` integer,
	PRIMARY KEY(`meter_id`, `month`),
	FOREIGN KEY (`meter_id`) REFERENCES `meters`(`id`) ON UPDATE no action ON DELETE cascade
) WITHOUT ROWID;
--> statement-breakpoint
CREATE TABLE `meter_state` (
	`meter_id` integer PRIMARY KEY NOT NULL,
	`last_at` integer NOT NULL,
	`last_value` real NOT NULL,
	`demand_kw` real,
	FOREIGN KEY (`meter_id`) REFERENCES `meters`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `meters` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`name` text NOT NULL,
	`code` text,
	`kind` text NOT NULL,
	`area` text,
	`site` integer DEFAULT false NOT NULL,
	`terms` text DEFAULT '[]' NOT NULL,
	`enabled` integer DEFAULT true NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `meters_code_unique` ON `meters` (`code`);--> statement-breakpoint
CREATE UNIQUE INDEX `meters_name_unique` ON `meters` (`name`);--> statement-breakpoint
CREATE TABLE `tariff_versions` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`valid_from` text NOT NULL,
	`price` real NOT NULL,
	`bands` text DEFAULT '[]' NOT NULL,
	`holidays` text DEFAULT '[]' NOT NULL,
	`standing_charge_per_day` real DEFAULT 0 NOT NULL,
	`carbon_factor` real NOT NULL,
	`contracted_peak_kw` real,
	`note` text DEFAULT '' NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `tariff_versions_valid_from_unique` ON `tariff_versions` (`valid_from`);--> statement-breakpoint
INSERT INTO `tariff_versions` (`valid_from`, `price`, `carbon_factor`, `note`, `created_at`, `updated_at`)
  SELECT '2000-01-01', `electricity_price`, `carbon_factor`, 'from the platform configuration at install', strftime('%Y-%m-%dT%H:%M:%fZ'), strftime('%Y-%m-%dT%H:%M:%fZ') FROM `platform_config` WHERE `id` = 1;
