// Alarm handling: notes on alerts, notification rules and the record of every notification sent.
import { index, integer, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core';
import { createdAt, id, updatedAt } from './columns.ts';
import { type ALERT_LEVELS, alerts } from './facility.ts';
import { users } from './users.ts';

export const ALERT_NOTE_KINDS = ['comment', 'acknowledge', 'resolve', 'shelve', 'unshelve'] as const;

export const alertNotes = sqliteTable(
  'alert_notes',
  {
    id: id(),
    alertId: integer('alert_id')
      .notNull()
      .references(() => alerts.id, { onDelete: 'cascade' }),
    kind: text('kind', { enum: ALERT_NOTE_KINDS }).notNull(),
    text: text('text').notNull().default(''),
    userId: integer('user_id').references(() => users.id, { onDelete: 'set null' }),
    username: text('username'),
    at: text('at').notNull(),
  },
  (t) => [index('alert_notes_alert_idx').on(t.alertId, t.id)],
);

/** Who is told about which new alerts, and who is told next when a critical one stays unacknowledged. */
export const notificationRules = sqliteTable('notification_rules', {
  id: id(),
  name: text('name').notNull(),
  levels: text('levels', { mode: 'json' }).$type<(typeof ALERT_LEVELS)[number][]>().notNull(),
  /** null: every area. */
  area: text('area'),
  recipients: text('recipients', { mode: 'json' }).$type<string[]>().notNull(),
  escalateAfterMin: integer('escalate_after_min'),
  escalateTo: text('escalate_to', { mode: 'json' }).$type<string[]>().notNull().default([]),
  enabled: integer('enabled', { mode: 'boolean' }).notNull().default(true),
  createdAt: createdAt(),
  updatedAt: updatedAt(),
});

export const NOTIFICATION_KINDS = ['alert', 'escalation', 'summary'] as const;
export const NOTIFICATION_STATUSES = ['delivered', 'failed'] as const;

/** Every mail sent (or tried) for an alert; a flood summary has no alert of its own and lists its alerts. */
export const notificationSends = sqliteTable(
  'notification_sends',
  {
    id: id(),
    alertId: integer('alert_id').references(() => alerts.id, { onDelete: 'cascade' }),
    ruleId: integer('rule_id').references(() => notificationRules.id, { onDelete: 'set null' }),
    kind: text('kind', { enum: NOTIFICATION_KINDS }).notNull(),
    recipient: text('recipient').notNull(),
    status: text('status', { enum: NOTIFICATION_STATUSES }).notNull(),
    error: text('error'),
    alertIds: text('alert_ids', { mode: 'json' }).$type<number[]>().notNull().default([]),
    at: text('at').notNull(),
  },
  (t) => [index('notification_sends_alert_idx').on(t.alertId), index('notification_sends_recipient_idx').on(t.recipient, t.at)],
);

export const ALARM_AREA_MATCHES = ['exact', 'prefix'] as const;

/**
 * Which area a gateway alarm point belongs to (issue 45 item 11): an exact point code or a code prefix (`srv.`), set
 * by an admin. Read when an alarm first becomes an alert; an alert keeps the area it was raised with.
 */
export const alarmAreas = sqliteTable(
  'alarm_areas',
  {
    id: id(),
    code: text('code').notNull(),
    match: text('match', { enum: ALARM_AREA_MATCHES }).notNull(),
    area: text('area').notNull(),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [uniqueIndex('alarm_areas_code_match_unique').on(t.code, t.match)],
);
