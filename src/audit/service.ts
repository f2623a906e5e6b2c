// The audit trail: who changed what and when, with before/after for status and role changes.
import { equals, PagedList, timeWindow } from '../http/listQuery.ts';
import type { Db } from '../db/client.ts';

export { AuditLog, type AuditEntry } from '../db/auditTrail.ts';

export type AuditFilters = { page: number; pageSize: number; resource?: string; resourceId?: string; action?: string; userId?: number; from?: string; to?: string };

export type AuditRecord = {
  id: number;
  at: string;
  userId: number | null;
  username: string | null;
  action: string;
  resource: string;
  resourceId: string | null;
  before: unknown;
  after: unknown;
};


// Every filter is a NULL-able parameter, so the list stays two prepared statements however it is filtered.
function parseJson(text: string | null): unknown {
  if (text === null) return null;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** Reads the trail for GET /api/audit, newest first. */
export class AuditReader {
  private readonly pages: PagedList<AuditRecord & { before: string | null; after: string | null }>;

  constructor(db: Db) {
    this.pages = new PagedList(db.sqlite, 'audit_log', 'id, at, user_id AS userId, username, action, resource, resource_id AS resourceId, before, after', 'id DESC');
  }

  list(filters: AuditFilters): { items: AuditRecord[]; total: number; page: number; pageSize: number } {
    const { items: rows, total } = this.pages.page(
      [
        ...equals('resource', 'resource', filters.resource),
        ...equals('resource_id', 'resourceId', filters.resourceId),
        ...equals('action', 'action', filters.action),
        ...equals('user_id', 'userId', filters.userId),
        ...timeWindow('at', filters.from, filters.to),
      ],
      filters.page,
      filters.pageSize,
    );
    return {
      items: rows.map((row) => ({ ...row, before: parseJson(row.before), after: parseJson(row.after) })),
      total,
      page: filters.page,
      pageSize: filters.pageSize,
    };
  }
}
