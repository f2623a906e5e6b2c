CREATE TABLE `meter_days_dropped` (
	`meter_id` integer NOT NULL,
	`day` text NOT NULL,
	`sync_seq` integer DEFAULT 0 NOT NULL,
	PRIMARY KEY(`meter_id`, `day`)
);
--> statement-breakpoint
CREATE INDEX `meter_days_dropped_seq` ON `meter_days_dropped` (`sync_seq`);--> statement-breakpoint
-- Hand-written (drizzle-kit cannot declare triggers): a meter day deleted whole by a clock step back takes the next
-- sequence in the deleting transaction (INSERT OR REPLACE: a day dropped again takes a new one), so the deletion reaches
-- the fleet in order with every other change (src/fleetSync/batch.ts), as deleted alerts do (migration 0024).
CREATE TRIGGER `meter_days_dropped_sync` AFTER INSERT ON `meter_days_dropped` BEGIN
  UPDATE `sync_sequence` SET `value` = `value` + 1 WHERE `id` = 1;
  UPDATE `meter_days_dropped` SET `sync_seq` = (SELECT `value` FROM `sync_sequence` WHERE `id` = 1)
    WHERE `meter_id` = NEW.`meter_id` AND `day` = NEW.`day`;
END;
