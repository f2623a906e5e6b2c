CREATE TABLE `fleet_link` (
	`id` integer PRIMARY KEY NOT NULL,
	`fleet_url` text NOT NULL,
	`site_id` text NOT NULL,
	`credential` text NOT NULL,
	`joined_at` text NOT NULL,
	`cursor` integer DEFAULT 0 NOT NULL,
	`ahead_day` text,
	`last_attempt_at` text,
	`last_success_at` text,
	`last_error` text,
	`last_error_code` text,
	`not_before` integer DEFAULT 0 NOT NULL
);
--> statement-breakpoint
CREATE TABLE `sync_sequence` (
	`id` integer PRIMARY KEY NOT NULL,
	`value` integer NOT NULL,
	`sent_through` integer DEFAULT 0 NOT NULL
);
--> statement-breakpoint
ALTER TABLE `alerts` ADD `sync_seq` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
CREATE INDEX `alerts_sync_seq` ON `alerts` (`sync_seq`);--> statement-breakpoint
ALTER TABLE `meter_days` ADD `sync_seq` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
CREATE INDEX `meter_days_sync_seq` ON `meter_days` (`sync_seq`);--> statement-breakpoint
-- Hand-written below (drizzle-kit cannot declare triggers): the rows already stored take sequences in day order, so a
-- box joining a fleet later sends its history oldest-first. Then a new row takes the next sequence, and a changed row
-- takes one only when a batch has carried it already (its sequence at or below sent_through): a row waiting to be sent
-- is read with its latest content by the batch that carries it. All inside the writing transaction: SQLite has one
-- writer, so sequences appear in commit order and a cursor never passes a row still to come.
UPDATE `meter_days` SET `sync_seq` = s.n FROM (SELECT `day`, `meter_id`, row_number() OVER (ORDER BY `day`, `meter_id`) AS n FROM `meter_days`) AS s
  WHERE `meter_days`.`day` = s.`day` AND `meter_days`.`meter_id` = s.`meter_id`;--> statement-breakpoint
UPDATE `alerts` SET `sync_seq` = (SELECT count(*) FROM `meter_days`) + s.n FROM (SELECT `id`, row_number() OVER (ORDER BY `id`) AS n FROM `alerts`) AS s
  WHERE `alerts`.`id` = s.`id`;--> statement-breakpoint
INSERT INTO `sync_sequence` (`id`, `value`, `sent_through`) VALUES (1, (SELECT count(*) FROM `meter_days`) + (SELECT count(*) FROM `alerts`), 0);--> statement-breakpoint
CREATE TRIGGER `meter_days_sync_insert` AFTER INSERT ON `meter_days` BEGIN
  UPDATE `sync_sequence` SET `value` = `value` + 1 WHERE `id` = 1;
  UPDATE `meter_days` SET `sync_seq` = (SELECT `value` FROM `sync_sequence` WHERE `id` = 1) WHERE `day` = NEW.`day` AND `meter_id` = NEW.`meter_id`;
END;--> statement-breakpoint
CREATE TRIGGER `meter_days_sync_update` AFTER UPDATE OF `kwh`, `flags`, `total_kwh`, `cost`, `carbon_kg` ON `meter_days`
  WHEN OLD.`sync_seq` <= (SELECT `sent_through` FROM `sync_sequence` WHERE `id` = 1) BEGIN
  UPDATE `sync_sequence` SET `value` = `value` + 1 WHERE `id` = 1;
  UPDATE `meter_days` SET `sync_seq` = (SELECT `value` FROM `sync_sequence` WHERE `id` = 1) WHERE `day` = NEW.`day` AND `meter_id` = NEW.`meter_id`;
END;--> statement-breakpoint
CREATE TRIGGER `alerts_sync_insert` AFTER INSERT ON `alerts` BEGIN
  UPDATE `sync_sequence` SET `value` = `value` + 1 WHERE `id` = 1;
  UPDATE `alerts` SET `sync_seq` = (SELECT `value` FROM `sync_sequence` WHERE `id` = 1) WHERE `id` = NEW.`id`;
END;--> statement-breakpoint
CREATE TRIGGER `alerts_sync_update` AFTER UPDATE OF `title`, `level`, `status`, `acknowledged_at`, `resolved_at` ON `alerts`
  WHEN OLD.`sync_seq` <= (SELECT `sent_through` FROM `sync_sequence` WHERE `id` = 1) BEGIN
  UPDATE `sync_sequence` SET `value` = `value` + 1 WHERE `id` = 1;
  UPDATE `alerts` SET `sync_seq` = (SELECT `value` FROM `sync_sequence` WHERE `id` = 1) WHERE `id` = NEW.`id`;
END;
