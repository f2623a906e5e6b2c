CREATE TABLE `login_throttle` (
	`key` text PRIMARY KEY NOT NULL,
	`failures` integer NOT NULL,
	`window_started_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `login_throttle_window_idx` ON `login_throttle` (`window_started_at`);--> statement-breakpoint
CREATE TABLE `oauth_links` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`user_id` integer NOT NULL,
	`provider` text NOT NULL,
	`provider_user_id` text NOT NULL,
	`created_at` text NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `oauth_links_identity_unique` ON `oauth_links` (`provider`,`provider_user_id`);--> statement-breakpoint
CREATE UNIQUE INDEX `oauth_links_user_provider_unique` ON `oauth_links` (`user_id`,`provider`);--> statement-breakpoint
CREATE TABLE `refresh_tokens` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`user_id` integer NOT NULL,
	`token_hash` text NOT NULL,
	`expires_at` integer NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `refresh_tokens_hash_unique` ON `refresh_tokens` (`token_hash`);--> statement-breakpoint
CREATE UNIQUE INDEX `refresh_tokens_user_unique` ON `refresh_tokens` (`user_id`);--> statement-breakpoint
CREATE TABLE `users` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`username` text NOT NULL,
	`email` text NOT NULL,
	`password_hash` text NOT NULL,
	`role` text DEFAULT 'viewer' NOT NULL,
	`display_name` text,
	`phone` text,
	`avatar_url` text,
	`avatar_stored_name` text,
	`avatar_mime_type` text,
	`last_login_at` text,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `users_username_unique` ON `users` ("username" COLLATE NOCASE);--> statement-breakpoint
CREATE UNIQUE INDEX `users_email_unique` ON `users` ("email" COLLATE NOCASE);--> statement-breakpoint
CREATE TABLE `app_settings` (
	`key` text PRIMARY KEY NOT NULL,
	`value` text NOT NULL,
	`updated_at` text NOT NULL
);
--> statement-breakpoint
CREATE TABLE `audit_log` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`at` text NOT NULL,
	`user_id` integer,
	`username` text,
	`action` text NOT NULL,
	`resource` text NOT NULL,
	`resource_id` text,
	`before` text,
	`after` text
);
--> statement-breakpoint
CREATE INDEX `audit_log_resource_idx` ON `audit_log` (`resource`,`resource_id`);--> statement-breakpoint
CREATE INDEX `audit_log_at_idx` ON `audit_log` (`at`);--> statement-breakpoint
CREATE TABLE `backup_schedule` (
	`id` integer PRIMARY KEY NOT NULL,
	`enabled` integer DEFAULT false NOT NULL,
	`cron` text DEFAULT '0 3 * * *' NOT NULL,
	`retention` integer DEFAULT 7 NOT NULL,
	`last_run_at` text,
	`last_status` text,
	`last_file` text,
	`updated_at` text NOT NULL
);
--> statement-breakpoint
CREATE TABLE `iot_gateway_token` (
	`id` integer PRIMARY KEY NOT NULL,
	`token` text,
	`expires_at` integer,
	`refreshed_at` integer
);
--> statement-breakpoint
CREATE TABLE `alerts` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`title` text NOT NULL,
	`message` text DEFAULT '' NOT NULL,
	`level` text NOT NULL,
	`source` text,
	`area` text,
	`status` text DEFAULT 'active' NOT NULL,
	`occurred_at` text NOT NULL,
	`acknowledged_at` text,
	`acknowledged_by` integer,
	`resolved_at` text,
	`resolved_by` integer,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`acknowledged_by`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE set null,
	FOREIGN KEY (`resolved_by`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE set null
);
--> statement-breakpoint
CREATE INDEX `alerts_occurred_idx` ON `alerts` (`occurred_at`);--> statement-breakpoint
CREATE INDEX `alerts_status_idx` ON `alerts` (`status`,`occurred_at`);--> statement-breakpoint
CREATE TABLE `energy_areas` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`name` text NOT NULL,
	`today_kwh` real DEFAULT 0 NOT NULL,
	`month_kwh` real DEFAULT 0 NOT NULL,
	`year_kwh` real DEFAULT 0 NOT NULL,
	`power_kw` real DEFAULT 0 NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `energy_areas_name_unique` ON `energy_areas` (`name`);--> statement-breakpoint
CREATE TABLE `energy_daily` (
	`day` text NOT NULL,
	`area` text DEFAULT 'total' NOT NULL,
	`kwh` real NOT NULL,
	PRIMARY KEY(`day`, `area`)
);
--> statement-breakpoint
CREATE TABLE `fault_stats` (
	`id` integer PRIMARY KEY NOT NULL,
	`total` integer DEFAULT 0 NOT NULL,
	`open` integer DEFAULT 0 NOT NULL,
	`in_progress` integer DEFAULT 0 NOT NULL,
	`resolved` integer DEFAULT 0 NOT NULL,
	`closed` integer DEFAULT 0 NOT NULL,
	`by_severity` text NOT NULL,
	`mttr_hours` real,
	`updated_at` text NOT NULL
);
--> statement-breakpoint
CREATE TABLE `faults` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`device` text NOT NULL,
	`code` text,
	`description` text DEFAULT '' NOT NULL,
	`severity` text NOT NULL,
	`status` text DEFAULT 'open' NOT NULL,
	`area` text,
	`assignee` text,
	`reported_at` text NOT NULL,
	`resolved_at` text,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `faults_reported_idx` ON `faults` (`reported_at`);--> statement-breakpoint
CREATE INDEX `faults_status_idx` ON `faults` (`status`,`reported_at`);--> statement-breakpoint
CREATE TABLE `maintenance` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`equipment` text NOT NULL,
	`type` text NOT NULL,
	`description` text DEFAULT '' NOT NULL,
	`status` text DEFAULT 'planned' NOT NULL,
	`scheduled_at` text,
	`completed_at` text,
	`assignee` text,
	`cost` real,
	`fault_id` integer,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`fault_id`) REFERENCES `faults`(`id`) ON UPDATE no action ON DELETE set null
);
--> statement-breakpoint
CREATE INDEX `maintenance_created_idx` ON `maintenance` (`created_at`);--> statement-breakpoint
CREATE INDEX `maintenance_status_idx` ON `maintenance` (`status`,`scheduled_at`);--> statement-breakpoint
CREATE TABLE `report_plans` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`name` text NOT NULL,
	`template_id` integer NOT NULL,
	`cron` text NOT NULL,
	`format` text DEFAULT 'csv' NOT NULL,
	`recipients` text NOT NULL,
	`enabled` integer DEFAULT true NOT NULL,
	`last_run_at` text,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`template_id`) REFERENCES `report_templates`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE TABLE `report_templates` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`key` text NOT NULL,
	`name` text NOT NULL,
	`description` text DEFAULT '' NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `report_templates_key_unique` ON `report_templates` (`key`);--> statement-breakpoint
CREATE TABLE `dashboard_settings` (
	`user_id` integer PRIMARY KEY NOT NULL,
	`layout` text NOT NULL,
	`refresh_interval_sec` integer DEFAULT 30 NOT NULL,
	`theme` text DEFAULT 'light' NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `platform_config` (
	`id` integer PRIMARY KEY NOT NULL,
	`site_name` text NOT NULL,
	`logo_url` text,
	`timezone` text NOT NULL,
	`locale` text NOT NULL,
	`currency` text NOT NULL,
	`electricity_price` real NOT NULL,
	`carbon_factor` real NOT NULL,
	`refresh_interval_sec` integer NOT NULL,
	`updated_at` text NOT NULL
);
--> statement-breakpoint
CREATE TABLE `three_d_config` (
	`id` integer PRIMARY KEY NOT NULL,
	`camera_preset` text NOT NULL,
	`ambient_intensity` real NOT NULL,
	`hotspots` text NOT NULL,
	`labels` text NOT NULL,
	`model_file_id` integer,
	`updated_at` text NOT NULL
);
--> statement-breakpoint
CREATE TABLE `files` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`original_name` text NOT NULL,
	`stored_name` text NOT NULL,
	`mime_type` text NOT NULL,
	`size` integer NOT NULL,
	`sha256` text NOT NULL,
	`uploaded_by` integer,
	`created_at` text NOT NULL,
	FOREIGN KEY (`uploaded_by`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE set null
);
--> statement-breakpoint
CREATE UNIQUE INDEX `files_stored_name_unique` ON `files` (`stored_name`);--> statement-breakpoint
CREATE INDEX `files_created_idx` ON `files` (`created_at`);--> statement-breakpoint
CREATE TABLE `model_files` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`original_name` text NOT NULL,
	`stored_name` text NOT NULL,
	`mime_type` text NOT NULL,
	`size` integer NOT NULL,
	`sha256` text NOT NULL,
	`uploaded_by` integer,
	`created_at` text NOT NULL,
	FOREIGN KEY (`uploaded_by`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE set null
);
--> statement-breakpoint
CREATE UNIQUE INDEX `model_files_stored_name_unique` ON `model_files` (`stored_name`);--> statement-breakpoint
CREATE INDEX `model_files_created_idx` ON `model_files` (`created_at`);