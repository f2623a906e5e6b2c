CREATE TABLE `billing_allocations` (
	`meter_id` integer PRIMARY KEY NOT NULL,
	`method` text NOT NULL,
	`shares` text NOT NULL,
	`landlord_value` real DEFAULT 0 NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`meter_id`) REFERENCES `meters`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `billing_budgets` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`year` integer NOT NULL,
	`utility` text NOT NULL,
	`scope` text NOT NULL,
	`target` text DEFAULT '' NOT NULL,
	`quantity` real NOT NULL,
	`amount` real NOT NULL,
	`phasing` text DEFAULT 'last_year' NOT NULL,
	`margin_percent` real DEFAULT 5 NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `billing_budgets_unique` ON `billing_budgets` (`year`,`utility`,`scope`,`target`);--> statement-breakpoint
CREATE TABLE `billing_periods` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`name` text NOT NULL,
	`from_day` text NOT NULL,
	`to_day` text NOT NULL,
	`created_at` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `billing_periods_from_unique` ON `billing_periods` (`from_day`);--> statement-breakpoint
CREATE TABLE `billing_runs` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`period_id` integer NOT NULL,
	`status` text DEFAULT 'draft' NOT NULL,
	`kind` text NOT NULL,
	`corrects_run_id` integer,
	`computed_at` text NOT NULL,
	`issued_at` text,
	`issued_by` text,
	`summary` text NOT NULL,
	FOREIGN KEY (`period_id`) REFERENCES `billing_periods`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `billing_runs_one_draft` ON `billing_runs` (`period_id`) WHERE status = 'draft';--> statement-breakpoint
CREATE INDEX `billing_runs_period` ON `billing_runs` (`period_id`);--> statement-breakpoint
CREATE TABLE `billing_settings` (
	`id` integer PRIMARY KEY NOT NULL,
	`max_missing_percent` real DEFAULT 0.5 NOT NULL,
	`max_estimated_percent` real DEFAULT 5 NOT NULL,
	`supplier_bill_tolerance_percent` real DEFAULT 2 NOT NULL,
	`updated_at` text NOT NULL
);
--> statement-breakpoint
CREATE TABLE `billing_statements` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`run_id` integer NOT NULL,
	`tenant_id` integer NOT NULL,
	`total_cents` integer NOT NULL,
	`content` text NOT NULL,
	`difference` text,
	FOREIGN KEY (`run_id`) REFERENCES `billing_runs`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`tenant_id`) REFERENCES `billing_tenants`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `billing_statements_run_tenant` ON `billing_statements` (`run_id`,`tenant_id`);--> statement-breakpoint
CREATE TABLE `billing_tenants` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`name` text NOT NULL,
	`kind` text DEFAULT 'tenant' NOT NULL,
	`contact_email` text,
	`floor_area_m2` real DEFAULT 0 NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `billing_tenants_name_unique` ON `billing_tenants` (`name`);--> statement-breakpoint
CREATE TABLE `savings_measures` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`name` text NOT NULL,
	`description` text DEFAULT '' NOT NULL,
	`meter_id` integer,
	`area` text,
	`target` text NOT NULL,
	`installed_on` text NOT NULL,
	`cost` real DEFAULT 0 NOT NULL,
	`baseline_from` text NOT NULL,
	`baseline_to` text NOT NULL,
	`temperature_code` text DEFAULT 'temp.outdoor' NOT NULL,
	`heating_base_c` real DEFAULT 15.5 NOT NULL,
	`cooling_base_c` real DEFAULT 21 NOT NULL,
	`adjustments` text DEFAULT '[]' NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`meter_id`) REFERENCES `meters`(`id`) ON UPDATE no action ON DELETE set null
);
--> statement-breakpoint
CREATE TABLE `supplier_bills` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`meter_id` integer NOT NULL,
	`from_day` text NOT NULL,
	`to_day` text NOT NULL,
	`reference` text DEFAULT '' NOT NULL,
	`bands` text NOT NULL,
	`billed_kw` real,
	`standing_charges` real DEFAULT 0 NOT NULL,
	`total` real NOT NULL,
	`calorific_value` real,
	`created_at` text NOT NULL,
	`created_by` text,
	FOREIGN KEY (`meter_id`) REFERENCES `meters`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `supplier_bills_meter` ON `supplier_bills` (`meter_id`,`from_day`);