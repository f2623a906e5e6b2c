// The audit trail: who changed what and when, with before/after for status and role changes.
import type { Db } from '../db/client.ts';
import { BadRequest } from '../http/errors.ts';
import type { AuthUser } from '../http/route.ts';

export type AuditEntry = {
  actor: Pick<AuthUser, 'id' | 'username'> | null;
  action: string;
  resource: string;
  resourceId?: string | number | null;
  before?: unknown;
  after?: unknown;
};

export class AuditLog {
  private readonly insert;

  constructor(db: Db) {
    this.insert = db.sqlite.prepare(
      'INSERT INTO audit_log (at, user_id, username, action, resource, resource_id, before, after) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
    );
  }

  /** Synchronous, so it can run inside the transaction of the write it records. */
  record(entry: AuditEntry): void {
    this.insert.run(
      new Date().toISOString(),
      entry.actor?.id ?? null,
      entry.actor?.username ?? null,
      entry.action,
      entry.resource,
      entry.resourceId === undefined || entry.resourceId === null ? null : String(entry.resourceId),
      entry.before === undefined ? null : JSON.stringify(entry.before),
      entry.after === undefined ? null : JSON.stringify(entry.after),
    );
  }
}

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

const DAY_MS = 86_400_000;

// Every filter is a NULL-able parameter, so the list stays two prepared statements however it is filtered.
const AUDIT_WHERE = `WHERE (@resource IS NULL OR resource = @resource)
  AND (@resourceId IS NULL OR resource_id = @resourceId)
  AND (@action IS NULL OR action = @action)
  AND (@userId IS NULL OR user_id = @userId)
  AND (@from IS NULL OR at >= @from)
  AND (@to IS NULL OR at < @to)`;

/** Stored times come from toISOString(), so bounds normalised the same way compare exactly as text. A date-only `to` includes that day. */
export function auditWindow(from: string | undefined, to: string | undefined): { from: string | null; to: string | null } {
  const start = from === undefined ? null : Date.parse(from);
  const end = to === undefined ? null : Date.parse(to) + (to.length === 10 ? DAY_MS : 1);
  if (start !== null && end !== null && start >= end) throw new BadRequest('Invalid query', [{ path: 'query.from', message: 'must not be later than to' }]);
  return { from: start === null ? null : new Date(start).toISOString(), to: end === null ? null : new Date(end).toISOString() };
}

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
  private readonly count;
  private readonly pageOf;

  constructor(db: Db) {
    this.count = db.sqlite.prepare(`SELECT count(*) FROM audit_log ${AUDIT_WHERE}`).pluck();
    this.pageOf = db.sqlite.prepare(
      `SELECT id, at, user_id AS userId, username, action, resource, resource_id AS resourceId, before, after
       FROM audit_log ${AUDIT_WHERE} ORDER BY id DESC LIMIT @limit OFFSET @offset`,
    );
  }

  list(filters: AuditFilters): { items: AuditRecord[]; total: number; page: number; pageSize: number } {
    const params = {
      resource: filters.resource ?? null,
      resourceId: filters.resourceId ?? null,
      action: filters.action ?? null,
      userId: filters.userId ?? null,
      ...auditWindow(filters.from, filters.to),
    };
    const total = this.count.get(params) as number;
    const offset = (filters.page - 1) * filters.pageSize;
    const rows = offset < total ? (this.pageOf.all({ ...params, limit: filters.pageSize, offset }) as (AuditRecord & { before: string | null; after: string | null })[]) : [];
    return {
      items: rows.map((row) => ({ ...row, before: parseJson(row.before), after: parseJson(row.after) })),
      total,
      page: filters.page,
      pageSize: filters.pageSize,
    };
  }
}
