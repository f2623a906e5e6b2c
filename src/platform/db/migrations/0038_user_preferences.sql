-- A person's language and theme for the staff app, kept on the server so a second device gets them (issue 53). NULL: the browser's choice.
ALTER TABLE `users` ADD `language` text;--> statement-breakpoint
ALTER TABLE `users` ADD `theme` text;
