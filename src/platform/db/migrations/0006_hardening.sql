-- Gateway alarms whose raisedAt moves with the gateway's clock are matched to their open occurrence by code (alerts service).
CREATE INDEX `alerts_open_alarm_idx` ON `alerts` (`source`) WHERE alarm_key IS NOT NULL AND cleared_at IS NULL;--> statement-breakpoint
-- Alerts from gateway alarms stamped outside [2000, now + 5 min] (year -271821 made its alert unreadable, year 2999 topped
-- the wallboard forever) take the time the service recorded them, as the poller now does for new ones.
UPDATE `alerts` SET `occurred_at` = `created_at`
WHERE `alarm_key` IS NOT NULL
  AND (`occurred_at` NOT GLOB '[0-9][0-9][0-9][0-9]-*' OR `occurred_at` < '2000-01-01' OR `occurred_at` > strftime('%Y-%m-%dT%H:%M:%fZ', `created_at`, '+5 minutes'));--> statement-breakpoint
UPDATE `alerts` SET `cleared_at` = `created_at`
WHERE `alarm_key` IS NOT NULL AND `cleared_at` IS NOT NULL
  AND (`cleared_at` NOT GLOB '[0-9][0-9][0-9][0-9]-*' OR `cleared_at` < `occurred_at`);
--> statement-breakpoint
-- Refresh tokens already rotated away, until they would have expired: one presented again ends the session (RFC 9700 reuse detection).
CREATE TABLE `refresh_tokens_retired` (
	`token_hash` text PRIMARY KEY NOT NULL,
	`user_id` integer NOT NULL,
	`expires_at` integer NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
