// Maintenance records: CRUD with a checked link to a fault and completedAt that follows the status.
import { desc, eq, sql } from 'drizzle-orm';
import type { MaintenanceFromInput } from './schemas.ts';
import type { Actor, AuditLog } from '../../platform/db/auditTrail.ts';
import { AuditedTable } from '../../platform/db/auditedTable.ts';
import type { Db } from '../../platform/db/client.ts';
import { contains, equals, oneOf, timeWindow, type PageResult } from '../../platform/db/listQuery.ts';
import { faults, maintenance } from '../../platform/db/schema/index.ts';
import { BadRequest } from '../../platform/errors.ts';
import type { MaintenanceCreateInput, MaintenanceListFilters, MaintenanceUpdateInput, MaintenanceView } from './schemas.ts';

const iso = (value: string | null | undefined) => (value ? new Date(value).toISOString() : value);

export class MaintenanceService {
  private readonly table;
  private readonly faultExists;

  constructor(db: Db, audit: AuditLog) {
    this.faultExists = db.orm
      .select({ id: faults.id })
      .from(faults)
      .where(eq(faults.id, sql.placeholder('id')))
      .prepare();
    this.table = new AuditedTable(db, audit, maintenance, {
      resource: 'maintenance',
      notFound: 'Maintenance record not found',
      orderBy: [desc(maintenance.createdAt), desc(maintenance.id)],
      // completedAt is stamped on the move into done and cleared when the record leaves it.
      lifecycle: (next, before, now) => ({ ...next, completedAt: next.status !== 'done' ? null : before?.status === 'done' ? next.completedAt : now }),
      // Only a changed link is checked: a record whose fault was deleted (fault_id set null) has nothing to check.
      check: (next, before) => {
        if (next.faultId !== (before?.faultId ?? null)) this.assertFault(next.faultId);
      },
    });
  }

  page(filters: MaintenanceListFilters): PageResult<MaintenanceView> {
    return this.table.page(
      [
        ...oneOf(maintenance.status, 'status', filters.status),
        ...oneOf(maintenance.type, 'type', filters.type),
        ...equals(maintenance.faultId, 'faultId', filters.faultId),
        ...contains([maintenance.equipment, maintenance.description, maintenance.assignee], filters.q),
        ...timeWindow(maintenance.scheduledAt, filters.from, filters.to),
      ],
      filters.page,
      filters.pageSize,
    );
  }

  get(id: number): MaintenanceView {
    return this.table.get(id);
  }

  create(input: MaintenanceCreateInput, actor: Actor): MaintenanceView {
    return this.table.create({ ...input, scheduledAt: iso(input.scheduledAt) }, actor);
  }

  /**
   * One call from an alert or a fault to the work that addresses it: equipment and description come from it, the record
   * is linked to it (faultId / alertId), type corrective unless told otherwise.
   */
  openFrom(origin: { alertId?: number; faultId?: number; equipment: string; description: string }, input: MaintenanceFromInput, actor: Actor): MaintenanceView {
    return this.table.create(
      {
        equipment: origin.equipment,
        type: input.type ?? 'corrective',
        description: input.description ?? origin.description,
        scheduledAt: iso(input.scheduledAt) ?? null,
        assignee: input.assignee ?? null,
        faultId: origin.faultId ?? null,
        alertId: origin.alertId ?? null,
      },
      actor,
    );
  }

  update(id: number, input: MaintenanceUpdateInput, actor: Actor): MaintenanceView {
    return this.table.update(id, { ...input, scheduledAt: iso(input.scheduledAt) }, actor);
  }

  delete(id: number, actor: Actor): void {
    this.table.delete(id, actor);
  }

  /** Checked here rather than left to the foreign key, so the client gets a 400 naming the field instead of a constraint error. */
  private assertFault(faultId: number | null): void {
    if (faultId !== null && !this.faultExists.get({ id: faultId })) {
      throw new BadRequest('Invalid body', [{ path: 'body.faultId', message: `no fault with id ${faultId}` }]);
    }
  }
}
