// The audit trail: who changed what and when, with before/after for status and role changes.
import type { Db } from '../db/client.ts';
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
