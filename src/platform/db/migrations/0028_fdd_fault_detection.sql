CREATE TABLE `fdd_episodes` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`rule_id` text NOT NULL,
	`rule_version` integer NOT NULL,
	`equipment` text NOT NULL,
	`started_at` text NOT NULL,
	`last_seen_at` text NOT NULL,
	`ended_at` text,
	`evidence` text NOT NULL,
	`waste_kwh` real DEFAULT 0 NOT NULL,
	`held_hours` real DEFAULT 0 NOT NULL,
	`waste_kwh_per_day` real DEFAULT 0 NOT NULL,
	`waste_money_per_day` real DEFAULT 0 NOT NULL,
	`method` text NOT NULL,
	`fault_id` integer,
	`not_a_fault_reason` text,
	`not_a_fault_at` text,
	FOREIGN KEY (`fault_id`) REFERENCES `faults`(`id`) ON UPDATE no action ON DELETE set null
);
--> statement-breakpoint
CREATE INDEX `fdd_episodes_rule_idx` ON `fdd_episodes` (`rule_id`,`equipment`,`ended_at`);--> statement-breakpoint
CREATE INDEX `fdd_episodes_started_idx` ON `fdd_episodes` (`started_at`);--> statement-breakpoint
CREATE TABLE `fdd_equipment` (
	`name` text PRIMARY KEY NOT NULL,
	`type` text NOT NULL,
	`params` text DEFAULT '{}' NOT NULL,
	`updated_at` text NOT NULL
);
--> statement-breakpoint
CREATE TABLE `fdd_points` (
	`code` text PRIMARY KEY NOT NULL,
	`equipment` text NOT NULL,
	`equipment_type` text NOT NULL,
	`brick_class` text NOT NULL,
	`unit` text NOT NULL,
	`updated_at` text NOT NULL
);
--> statement-breakpoint
CREATE TABLE `fdd_rule_switches` (
	`rule_id` text PRIMARY KEY NOT NULL,
	`enabled` integer DEFAULT true NOT NULL,
	`paused_at` text,
	`paused_reason` text,
	`updated_at` text NOT NULL
);
--> statement-breakpoint
CREATE TABLE `fdd_rules` (
	`id` text NOT NULL,
	`version` integer NOT NULL,
	`definition` text NOT NULL,
	`created_at` text NOT NULL,
	PRIMARY KEY(`id`, `version`)
);
