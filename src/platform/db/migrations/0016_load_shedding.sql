CREATE TABLE `load_shed_settings` (
	`id` integer PRIMARY KEY NOT NULL,
	`enabled` integer DEFAULT 0 NOT NULL,
	`min_off_sec` integer DEFAULT 300 NOT NULL,
	`max_shed_sec` integer DEFAULT 1800 NOT NULL
);
--> statement-breakpoint
INSERT INTO `load_shed_settings` (`id`, `enabled`, `min_off_sec`, `max_shed_sec`) VALUES (1, 0, 300, 1800);
--> statement-breakpoint
CREATE TABLE `load_shed_points` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`code` text NOT NULL,
	`priority` integer NOT NULL,
	`shed_value` real NOT NULL,
	`restore_value` real NOT NULL,
	`shed_at` integer,
	`shed_window` integer,
	`not_before` integer,
	`last_error` text,
	`last_error_at` integer
);
--> statement-breakpoint
CREATE UNIQUE INDEX `load_shed_points_code_unique` ON `load_shed_points` (`code`);
