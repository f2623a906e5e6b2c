CREATE TABLE `meter_fold` (
	`id` integer PRIMARY KEY NOT NULL,
	`open_from` text NOT NULL
);
