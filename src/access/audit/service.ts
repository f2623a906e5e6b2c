// The audit trail: who changed what and when, with before/after for status and role changes.
import { desc } from 'drizzle-orm';
import type { Db } from '../../platform/db/client.ts';
import { equals, PagedQuery, timeWindow } from '../../platform/db/listQuery.ts';
import { auditLog } from '../../platform/db/schema/index.ts';

export type AuditFilters = {
  page: number;
  pageSize: number;
  resource?: string;
  resourceId?: string;
  action?: string;
  userId?: number;
  from?: string;
  to?: string;
};

export type AuditRecord = typeof auditLog.$inferSelect;

/** Reads the trail for GET /api/audit, newest first. */
export class AuditReader {
  private readonly pages;

  constructor(db: Db) {
    this.pages = new PagedQuery(db, auditLog, [desc(auditLog.id)]);
  }

  list(filters: AuditFilters): { items: AuditRecord[]; total: number; page: number; pageSize: number } {
    return this.pages.page(
      [
        ...equals(auditLog.resource, 'resource', filters.resource),
        ...equals(auditLog.resourceId, 'resourceId', filters.resourceId),
        ...equals(auditLog.action, 'action', filters.action),
        ...equals(auditLog.userId, 'userId', filters.userId),
        ...timeWindow(auditLog.at, filters.from, filters.to),
      ],
      filters.page,
      filters.pageSize,
    );
  }
}
