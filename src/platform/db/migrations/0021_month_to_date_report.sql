-- A report a new box can show on its first day: this calendar month up to and including today (issue 45: the first
-- monthly report of a new box covers the month before it was installed, and says "No data" on every figure).
INSERT INTO `report_templates` (`key`, `name`, `description`)
SELECT 'month-to-date', 'Month to date', 'Energy, cost and carbon per day and per area from the first of this calendar month up to and including today, with peak demand'
WHERE NOT EXISTS (SELECT 1 FROM `report_templates` WHERE `key` = 'month-to-date');
