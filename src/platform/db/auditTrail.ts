// Writes the audit trail (who changed what and when) inside the transaction of the write it records.
import { eq } from 'drizzle-orm';
import type { Db } from './client.ts';
import { slot } from './listQuery.ts';
import { auditLog } from './schema/index.ts';

/** Who made a change: a signed-in user, or a tool acting without an account (id null, e.g. `emsctl`). */
export type Actor = { id: number | null; username: string };

export type AuditEntry = {
  actor: Actor | null;
  action: string;
  resource: string;
  resourceId?: string | number | null;
  before?: unknown;
  after?: unknown;
};

/**
 * Keys the trail never stores, whatever a caller passes: password hashes, tokens, secrets. (A fault's `code` is its
 * error code, not a secret; verification codes live only in memory.)
 */
const SECRET_KEY = /hash|token|secret|password/i;

function withoutSecrets(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutSecrets);
  if (value === null || typeof value !== 'object') return value;
  const kept: Record<string, unknown> = {};
  for (const [key, inner] of Object.entries(value)) if (!SECRET_KEY.test(key)) kept[key] = withoutSecrets(inner);
  return kept;
}

export class AuditLog {
  private readonly insert;

  constructor(db: Db) {
    this.insert = db.orm
      .insert(auditLog)
      .values({
        at: slot('at'),
        userId: slot('userId'),
        username: slot('username'),
        action: slot('action'),
        resource: slot('resource'),
        resourceId: slot('resourceId'),
        before: slot('before'),
        after: slot('after'),
      })
      .prepare();
  }

  /** Synchronous, so it can run inside the transaction of the write it records. */
  record(entry: AuditEntry): void {
    this.insert.run({
      at: new Date().toISOString(),
      userId: entry.actor?.id ?? null,
      username: entry.actor?.username ?? null,
      action: entry.action,
      resource: entry.resource,
      resourceId: entry.resourceId === undefined || entry.resourceId === null ? null : String(entry.resourceId),
      before: entry.before === undefined ? null : JSON.stringify(withoutSecrets(entry.before)),
      after: entry.after === undefined ? null : JSON.stringify(withoutSecrets(entry.after)),
    });
  }
}

/**
 * Whether any change of `resource` was ever recorded: defaults made once (the simulator's meters, the nightly backup)
 * are made only while nobody has changed the resource yet. Read with the caller's connection, inside its transaction.
 */
export function everAudited(db: Db, resource: string): boolean {
  return db.orm.select({ id: auditLog.id }).from(auditLog).where(eq(auditLog.resource, resource)).limit(1).get() !== undefined;
}

/** Before/after of only the fields a write changed, for audit entries. */
export function auditChanges<T extends object>(before: T, after: T): { before: Partial<T>; after: Partial<T> } | null {
  // updatedAt always moves and the entry carries its own time.
  const keys = (Object.keys(after) as (keyof T)[]).filter((key) => key !== 'updatedAt' && JSON.stringify(before[key]) !== JSON.stringify(after[key]));
  if (keys.length === 0) return null;
  return {
    before: Object.fromEntries(keys.map((key) => [key, before[key]])) as Partial<T>,
    after: Object.fromEntries(keys.map((key) => [key, after[key]])) as Partial<T>,
  };
}
