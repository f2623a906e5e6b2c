-- Single-row tables start with one row each, and the built-in report templates are listed here.
INSERT INTO `fault_stats` (`id`, `total`, `open`, `in_progress`, `resolved`, `closed`, `by_severity`, `mttr_hours`, `updated_at`)
VALUES (1, 0, 0, 0, 0, 0, '{"low":0,"medium":0,"high":0,"critical":0}', NULL, strftime('%Y-%m-%dT%H:%M:%fZ', 'now'));
--> statement-breakpoint
INSERT INTO `platform_config` (`id`, `site_name`, `logo_url`, `timezone`, `locale`, `currency`, `electricity_price`, `carbon_factor`, `refresh_interval_sec`, `updated_at`)
VALUES (1, 'EMS', NULL, 'UTC', 'en-US', 'EUR', 0.25, 0.4, 30, strftime('%Y-%m-%dT%H:%M:%fZ', 'now'));
--> statement-breakpoint
INSERT INTO `three_d_config` (`id`, `camera_preset`, `ambient_intensity`, `hotspots`, `labels`, `model_file_id`, `updated_at`)
VALUES (1, '{"position":{"x":30,"y":30,"z":30},"target":{"x":0,"y":0,"z":0},"fov":50}', 0.6, '[]', '[]', NULL, strftime('%Y-%m-%dT%H:%M:%fZ', 'now'));
--> statement-breakpoint
INSERT INTO `backup_schedule` (`id`, `enabled`, `cron`, `retention`, `updated_at`)
VALUES (1, 0, '0 3 * * *', 7, strftime('%Y-%m-%dT%H:%M:%fZ', 'now'));
--> statement-breakpoint
INSERT INTO `iot_gateway_token` (`id`, `token`, `expires_at`, `refreshed_at`) VALUES (1, NULL, NULL, NULL);
--> statement-breakpoint
INSERT INTO `report_templates` (`key`, `name`, `description`) VALUES
  ('energy-daily', 'Daily energy', 'Consumption per area for each day of the period'),
  ('energy-monthly', 'Monthly energy', 'Consumption and cost per area for each month of the period'),
  ('alerts-summary', 'Alert summary', 'Alerts by level and status, with time to acknowledge'),
  ('fault-summary', 'Fault summary', 'Faults by severity and status, with mean time to repair'),
  ('maintenance-log', 'Maintenance log', 'Maintenance records completed or due in the period');
