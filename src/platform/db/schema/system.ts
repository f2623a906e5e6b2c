// Service-wide rows: key/value settings (signing secret), audit trail, gateway token, backup schedule.
import { index, integer, sqliteTable, text } from 'drizzle-orm/sqlite-core';
import { id, nowIso, updatedAt } from './columns.ts';

export const appSettings = sqliteTable('app_settings', {
  key: text('key').primaryKey(),
  value: text('value').notNull(),
  updatedAt: updatedAt(),
});

export const auditLog = sqliteTable(
  'audit_log',
  {
    id: id(),
    at: text('at').notNull().$defaultFn(nowIso),
    userId: integer('user_id'),
    username: text('username'),
    action: text('action').notNull(),
    resource: text('resource').notNull(),
    resourceId: text('resource_id'),
    before: text('before', { mode: 'json' }),
    after: text('after', { mode: 'json' }),
  },
  (t) => [index('audit_log_resource_idx').on(t.resource, t.resourceId), index('audit_log_at_idx').on(t.at)],
);

/** Single row (id 1): the upstream gateway's bearer token, reused across restarts. */
export const iotGatewayToken = sqliteTable('iot_gateway_token', {
  id: integer('id').primaryKey(),
  token: text('token'),
  expiresAt: integer('expires_at'),
  refreshedAt: integer('refreshed_at'),
});

/** Single row (id 1). */
export const backupSchedule = sqliteTable('backup_schedule', {
  id: integer('id').primaryKey(),
  enabled: integer('enabled', { mode: 'boolean' }).notNull().default(false),
  cron: text('cron').notNull().default('0 3 * * *'),
  retention: integer('retention').notNull().default(7),
  lastRunAt: text('last_run_at'),
  lastStatus: text('last_status'),
  lastFile: text('last_file'),
  updatedAt: updatedAt(),
});
