// Report runs: one row per execution of a report plan (scheduled, caught up after downtime, or started by hand).
import { index, integer, sqliteTable, text } from 'drizzle-orm/sqlite-core';
import { id } from './columns.ts';
import { reportPlans } from './facility.ts';
import { users } from './users.ts';

export const REPORT_RUN_TRIGGERS = ['schedule', 'catch-up', 'manual'] as const;
export const REPORT_RUN_STATUSES = ['running', 'ok', 'failed'] as const;

/** A file a run produced: its download name, the name under <data dir>/reports/, its type and size. */
export type ReportRunFile = { name: string; storedName: string; contentType: string; sizeBytes: number };

export const reportRuns = sqliteTable(
  'report_runs',
  {
    id: id(),
    planId: integer('plan_id')
      .notNull()
      .references(() => reportPlans.id, { onDelete: 'cascade' }),
    trigger: text('trigger', { enum: REPORT_RUN_TRIGGERS }).notNull(),
    requestedBy: integer('requested_by').references(() => users.id, { onDelete: 'set null' }),
    status: text('status', { enum: REPORT_RUN_STATUSES }).notNull().default('running'),
    format: text('format').notNull(),
    periodFrom: text('period_from').notNull(),
    periodTo: text('period_to').notNull(),
    startedAt: text('started_at').notNull(),
    finishedAt: text('finished_at'),
    durationMs: integer('duration_ms'),
    sizeBytes: integer('size_bytes'),
    mailAttempts: integer('mail_attempts').notNull().default(0),
    error: text('error'),
    files: text('files', { mode: 'json' }).$type<ReportRunFile[]>().notNull().default([]),
    /** Set when retention deleted the files: the row stays as history. */
    filesDeletedAt: text('files_deleted_at'),
  },
  (t) => [index('report_runs_plan_idx').on(t.planId, t.startedAt)],
);
