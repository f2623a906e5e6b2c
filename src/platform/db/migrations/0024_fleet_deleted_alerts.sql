CREATE TABLE `sync_deleted_alerts` (
	`alert_id` integer PRIMARY KEY NOT NULL,
	`sync_seq` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `sync_deleted_alerts_seq` ON `sync_deleted_alerts` (`sync_seq`);--> statement-breakpoint
-- Hand-written (drizzle-kit cannot declare triggers): a deleted alert keeps its id under the next sequence, in the
-- deleting transaction, so the deletion reaches the fleet in order with every other change (src/fleetSync/batch.ts).
CREATE TRIGGER `alerts_sync_delete` AFTER DELETE ON `alerts` BEGIN
  UPDATE `sync_sequence` SET `value` = `value` + 1 WHERE `id` = 1;
  INSERT INTO `sync_deleted_alerts` (`alert_id`, `sync_seq`) VALUES (OLD.`id`, (SELECT `value` FROM `sync_sequence` WHERE `id` = 1))
    ON CONFLICT (`alert_id`) DO UPDATE SET `sync_seq` = excluded.`sync_seq`;
END;
