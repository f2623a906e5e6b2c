ALTER TABLE `savings_measures` ADD `method` text DEFAULT 'ems' NOT NULL;
