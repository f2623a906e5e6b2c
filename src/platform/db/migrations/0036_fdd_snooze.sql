ALTER TABLE `fdd_episodes` ADD `snoozed_until` text;--> statement-breakpoint
ALTER TABLE `fdd_episodes` ADD `snoozed_by` text;--> statement-breakpoint
ALTER TABLE `fdd_episodes` ADD `snooze_reason` text;
