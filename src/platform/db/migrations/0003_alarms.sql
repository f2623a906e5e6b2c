CREATE TABLE `alert_notes` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`alert_id` integer NOT NULL,
	`kind` text NOT NULL,
	`text` text DEFAULT '' NOT NULL,
	`user_id` integer,
	`username` text,
	`at` text NOT NULL,
	FOREIGN KEY (`alert_id`) REFERENCES `alerts`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE set null
);
--> statement-breakpoint
CREATE INDEX `alert_notes_alert_idx` ON `alert_notes` (`alert_id`,`id`);--> statement-breakpoint
CREATE TABLE `notification_rules` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`name` text NOT NULL,
	`levels` text NOT NULL,
	`area` text,
	`recipients` text NOT NULL,
	`escalate_after_min` integer,
	`escalate_to` text DEFAULT '[]' NOT NULL,
	`enabled` integer DEFAULT true NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL
);
--> statement-breakpoint
CREATE TABLE `notification_sends` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`alert_id` integer,
	`rule_id` integer,
	`kind` text NOT NULL,
	`recipient` text NOT NULL,
	`status` text NOT NULL,
	`error` text,
	`alert_ids` text DEFAULT '[]' NOT NULL,
	`at` text NOT NULL,
	FOREIGN KEY (`alert_id`) REFERENCES `alerts`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`rule_id`) REFERENCES `notification_rules`(`id`) ON UPDATE no action ON DELETE set null
);
--> statement-breakpoint
CREATE INDEX `notification_sends_alert_idx` ON `notification_sends` (`alert_id`);--> statement-breakpoint
CREATE INDEX `notification_sends_recipient_idx` ON `notification_sends` (`recipient`,`at`);--> statement-breakpoint
ALTER TABLE `alerts` ADD `alarm_key` text;--> statement-breakpoint
ALTER TABLE `alerts` ADD `cleared_at` text;--> statement-breakpoint
ALTER TABLE `alerts` ADD `shelved_until` text;--> statement-breakpoint
ALTER TABLE `alerts` ADD `shelved_by` integer REFERENCES users(id) ON DELETE SET NULL;--> statement-breakpoint
ALTER TABLE `alerts` ADD `shelve_reason` text;--> statement-breakpoint
CREATE UNIQUE INDEX `alerts_alarm_key_idx` ON `alerts` (`alarm_key`);--> statement-breakpoint
ALTER TABLE `maintenance` ADD `alert_id` integer REFERENCES alerts(id) ON DELETE SET NULL;