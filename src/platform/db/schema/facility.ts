// Operational records: alerts, faults (with their stats snapshot), maintenance, reports, energy.
import { sql } from 'drizzle-orm';
import { index, integer, primaryKey, real, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core';
import { createdAt, id, nowIso, updatedAt } from './columns.ts';
import { users } from './users.ts';

export const ALERT_LEVELS = ['info', 'warning', 'critical'] as const;
export const ALERT_STATUSES = ['active', 'acknowledged', 'resolved'] as const;

export const alerts = sqliteTable(
  'alerts',
  {
    id: id(),
    title: text('title').notNull(),
    message: text('message').notNull().default(''),
    level: text('level', { enum: ALERT_LEVELS }).notNull(),
    source: text('source'),
    area: text('area'),
    status: text('status', { enum: ALERT_STATUSES }).notNull().default('active'),
    occurredAt: text('occurred_at').notNull().$defaultFn(nowIso),
    acknowledgedAt: text('acknowledged_at'),
    acknowledgedBy: integer('acknowledged_by').references(() => users.id, { onDelete: 'set null' }),
    resolvedAt: text('resolved_at'),
    resolvedBy: integer('resolved_by').references(() => users.id, { onDelete: 'set null' }),
    /** The gateway alarm occurrence this alert stands for (`<alarm id>@<raisedAt>`); unique, so a restart never duplicates. */
    alarmKey: text('alarm_key'),
    /** When the gateway reported the condition back to normal; the alert still needs acknowledging (ISA-18.2). */
    clearedAt: text('cleared_at'),
    shelvedUntil: text('shelved_until'),
    shelvedBy: integer('shelved_by').references(() => users.id, { onDelete: 'set null' }),
    shelveReason: text('shelve_reason'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    index('alerts_occurred_idx').on(t.occurredAt),
    index('alerts_status_idx').on(t.status, t.occurredAt),
    uniqueIndex('alerts_alarm_key_idx').on(t.alarmKey),
    index('alerts_open_alarm_idx').on(t.source).where(sql`alarm_key IS NOT NULL AND cleared_at IS NULL`),
  ],
);

export const FAULT_SEVERITIES = ['low', 'medium', 'high', 'critical'] as const;
export const FAULT_STATUSES = ['open', 'in_progress', 'resolved', 'closed'] as const;

export const faults = sqliteTable(
  'faults',
  {
    id: id(),
    device: text('device').notNull(),
    code: text('code'),
    description: text('description').notNull().default(''),
    severity: text('severity', { enum: FAULT_SEVERITIES }).notNull(),
    status: text('status', { enum: FAULT_STATUSES }).notNull().default('open'),
    area: text('area'),
    assignee: text('assignee'),
    reportedAt: text('reported_at').notNull().$defaultFn(nowIso),
    resolvedAt: text('resolved_at'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [index('faults_reported_idx').on(t.reportedAt), index('faults_status_idx').on(t.status, t.reportedAt)],
);

/** Single row (id 1), rewritten in the same transaction as every fault write. */
export const faultStats = sqliteTable('fault_stats', {
  id: integer('id').primaryKey(),
  total: integer('total').notNull().default(0),
  open: integer('open').notNull().default(0),
  inProgress: integer('in_progress').notNull().default(0),
  resolved: integer('resolved').notNull().default(0),
  closed: integer('closed').notNull().default(0),
  bySeverity: text('by_severity', { mode: 'json' }).$type<Record<string, number>>().notNull(),
  mttrHours: real('mttr_hours'),
  updatedAt: updatedAt(),
});

export const MAINTENANCE_TYPES = ['preventive', 'corrective', 'inspection'] as const;
export const MAINTENANCE_STATUSES = ['planned', 'in_progress', 'done', 'cancelled'] as const;

export const maintenance = sqliteTable(
  'maintenance',
  {
    id: id(),
    equipment: text('equipment').notNull(),
    type: text('type', { enum: MAINTENANCE_TYPES }).notNull(),
    description: text('description').notNull().default(''),
    status: text('status', { enum: MAINTENANCE_STATUSES }).notNull().default('planned'),
    scheduledAt: text('scheduled_at'),
    completedAt: text('completed_at'),
    assignee: text('assignee'),
    cost: real('cost'),
    faultId: integer('fault_id').references(() => faults.id, { onDelete: 'set null' }),
    alertId: integer('alert_id').references(() => alerts.id, { onDelete: 'set null' }),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [index('maintenance_created_idx').on(t.createdAt), index('maintenance_status_idx').on(t.status, t.scheduledAt)],
);

export const reportTemplates = sqliteTable('report_templates', {
  id: id(),
  key: text('key').notNull().unique(),
  name: text('name').notNull(),
  description: text('description').notNull().default(''),
});

export const REPORT_FORMATS = ['pdf', 'csv', 'json'] as const;

export const reportPlans = sqliteTable('report_plans', {
  id: id(),
  name: text('name').notNull(),
  templateId: integer('template_id')
    .notNull()
    .references(() => reportTemplates.id),
  cron: text('cron').notNull(),
  format: text('format', { enum: REPORT_FORMATS }).notNull().default('csv'),
  recipients: text('recipients', { mode: 'json' }).$type<string[]>().notNull(),
  enabled: integer('enabled', { mode: 'boolean' }).notNull().default(true),
  lastRunAt: text('last_run_at'),
  createdAt: createdAt(),
  updatedAt: updatedAt(),
});

export const energyAreas = sqliteTable(
  'energy_areas',
  {
    id: id(),
    name: text('name').notNull(),
    todayKwh: real('today_kwh').notNull().default(0),
    monthKwh: real('month_kwh').notNull().default(0),
    yearKwh: real('year_kwh').notNull().default(0),
    powerKw: real('power_kw').notNull().default(0),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [uniqueIndex('energy_areas_name_unique').on(t.name)],
);

/** Daily consumption per area ('total' for the site), the source of the weekly chart. */
export const energyDaily = sqliteTable(
  'energy_daily',
  {
    day: text('day').notNull(),
    area: text('area').notNull().default('total'),
    kwh: real('kwh').notNull(),
  },
  (t) => [primaryKey({ columns: [t.day, t.area] })],
);
