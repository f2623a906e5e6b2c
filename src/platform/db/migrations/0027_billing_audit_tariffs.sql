ALTER TABLE `supplier_bills` ADD `lines` text DEFAULT '[]' NOT NULL;
--> statement-breakpoint
ALTER TABLE `supplier_bills` ADD `start_reading` real;
--> statement-breakpoint
ALTER TABLE `supplier_bills` ADD `end_reading` real;
--> statement-breakpoint
ALTER TABLE `billing_settings` ADD `bill_audit` text DEFAULT '{}' NOT NULL;
--> statement-breakpoint
CREATE TABLE `billing_tariffs` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`tenant_id` integer,
	`meter_id` integer,
	`commodity` text DEFAULT 'electricity' NOT NULL,
	`valid_from` text NOT NULL,
	`price` real NOT NULL,
	`bands` text DEFAULT '[]' NOT NULL,
	`holidays` text DEFAULT '[]' NOT NULL,
	`standing_charge_per_day` real DEFAULT 0 NOT NULL,
	`note` text DEFAULT '' NOT NULL,
	`created_at` text NOT NULL,
	`created_by` text,
	FOREIGN KEY (`tenant_id`) REFERENCES `billing_tenants`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`meter_id`) REFERENCES `meters`(`id`) ON UPDATE no action ON DELETE cascade,
	CHECK ((`tenant_id` IS NULL) <> (`meter_id` IS NULL))
);
--> statement-breakpoint
CREATE UNIQUE INDEX `billing_tariffs_tenant` ON `billing_tariffs` (`tenant_id`,`commodity`,`valid_from`);
--> statement-breakpoint
CREATE UNIQUE INDEX `billing_tariffs_meter` ON `billing_tariffs` (`meter_id`,`commodity`,`valid_from`);
