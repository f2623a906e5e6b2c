ALTER TABLE `platform_config` ADD `confirmed_fields` text DEFAULT '[]' NOT NULL;--> statement-breakpoint
-- A box already in use: what differs from the seed was set by someone, so it counts as confirmed.
UPDATE `platform_config` SET `confirmed_fields` = (
  SELECT json_group_array(`field`) FROM (
    SELECT 'siteName' AS `field` FROM `platform_config` WHERE `id` = 1 AND `site_name` <> 'EMS'
    UNION ALL SELECT 'timezone' FROM `platform_config` WHERE `id` = 1 AND `timezone` <> 'UTC'
    UNION ALL SELECT 'currency' FROM `platform_config` WHERE `id` = 1 AND `currency` <> 'EUR'
  )
) WHERE `id` = 1;
