CREATE TABLE `report_runs` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`plan_id` integer NOT NULL,
	`trigger` text NOT NULL,
	`requested_by` integer,
	`status` text DEFAULT 'running' NOT NULL,
	`format` text NOT NULL,
	`period_from` text NOT NULL,
	`period_to` text NOT NULL,
	`started_at` text NOT NULL,
	`finished_at` text,
	`duration_ms` integer,
	`size_bytes` integer,
	`mail_attempts` integer DEFAULT 0 NOT NULL,
	`error` text,
	`files` text DEFAULT '[]' NOT NULL,
	`files_deleted_at` text,
	FOREIGN KEY (`plan_id`) REFERENCES `report_plans`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`requested_by`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE set null
);
--> statement-breakpoint
CREATE INDEX `report_runs_plan_idx` ON `report_runs` (`plan_id`,`started_at`);--> statement-breakpoint
-- The templates that render: ids 1, 2, 3 and 5 are renamed in place so existing plans keep their template; plans on
-- the fault summary (id 4) move to the combined alerts-and-faults summary (id 3) before that row goes.
UPDATE `report_templates` SET `key` = 'weekly-energy', `name` = 'Weekly energy', `description` = 'Energy per day and per area over the last 7 days, with cost, carbon and peak demand' WHERE `id` = 1;
--> statement-breakpoint
UPDATE `report_templates` SET `key` = 'monthly-energy', `name` = 'Monthly energy and cost', `description` = 'Energy, cost and carbon per day and per area over the previous calendar month, with peak demand' WHERE `id` = 2;
--> statement-breakpoint
UPDATE `report_templates` SET `key` = 'alerts-faults', `name` = 'Alerts and faults summary', `description` = 'Alerts by level and status, faults by severity and status, mean time to repair, top alerts of the last 7 days' WHERE `id` = 3;
--> statement-breakpoint
UPDATE `report_plans` SET `template_id` = 3 WHERE `template_id` = 4;
--> statement-breakpoint
DELETE FROM `report_templates` WHERE `id` = 4;
--> statement-breakpoint
UPDATE `report_templates` SET `key` = 'maintenance-due', `name` = 'Maintenance due', `description` = 'Maintenance planned or in progress that is overdue or due within the next 14 days' WHERE `id` = 5;
