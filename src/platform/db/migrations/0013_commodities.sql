ALTER TABLE `meters` ADD `commodity` text DEFAULT 'electricity' NOT NULL;--> statement-breakpoint
ALTER TABLE `meters` ADD `role` text DEFAULT 'import' NOT NULL;--> statement-breakpoint
ALTER TABLE `tariff_versions` ADD `commodity` text DEFAULT 'electricity' NOT NULL;--> statement-breakpoint
ALTER TABLE `tariff_versions` ADD `feed_in_price` real DEFAULT 0 NOT NULL;--> statement-breakpoint
DROP INDEX `tariff_versions_valid_from_unique`;--> statement-breakpoint
CREATE UNIQUE INDEX `tariff_versions_commodity_valid_from_unique` ON `tariff_versions` (`commodity`,`valid_from`);--> statement-breakpoint
CREATE TABLE `calorific_versions` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`valid_from` text NOT NULL,
	`kwh_per_m3` real NOT NULL,
	`correction_factor` real DEFAULT 1 NOT NULL,
	`note` text DEFAULT '' NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `calorific_versions_valid_from_unique` ON `calorific_versions` (`valid_from`);--> statement-breakpoint
INSERT INTO `calorific_versions` (`valid_from`, `kwh_per_m3`, `correction_factor`, `note`, `created_at`, `updated_at`)
VALUES ('1970-01-01', 11.0, 1.02264, 'typical natural gas (39.6 MJ/m³) and the volume correction for 15 °C and 1013.25 mbar: replace with the figures on the gas bill', strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), strftime('%Y-%m-%dT%H:%M:%fZ', 'now'));
