// Factories and probes shared by the alerts, faults, maintenance and reports tests.
import type { TestServer, TestUser } from './server.ts';

export type AuditRow = { userId: number | null; username: string | null; action: string; resource: string; resourceId: string | null; before: any; after: any };

/** Audit rows of one record, oldest first, with before/after parsed. */
export function auditRows(server: TestServer, resource: string, resourceId: number): AuditRow[] {
  const rows = server.service.deps.db.sqlite
    .prepare(
      'SELECT user_id AS userId, username, action, resource, resource_id AS resourceId, before, after FROM audit_log WHERE resource = ? AND resource_id = ? ORDER BY id',
    )
    .all(resource, String(resourceId)) as AuditRow[];
  return rows.map((row) => ({ ...row, before: row.before === null ? null : JSON.parse(row.before), after: row.after === null ? null : JSON.parse(row.after) }));
}

export type Roles = { viewer: TestUser; operator: TestUser; admin: TestUser };

export async function createRoles(server: TestServer): Promise<Roles> {
  const [viewer, operator, admin] = await Promise.all([
    server.createUser({ role: 'viewer' }),
    server.createUser({ role: 'operator' }),
    server.createUser({ role: 'admin' }),
  ]);
  return { viewer, operator, admin };
}

/** A name no other test uses, to scope list filters to the rows one test created. */
let counter = 0;
export function uniqueName(prefix: string): string {
  counter += 1;
  return `${prefix}-${process.pid}-${counter}`;
}
