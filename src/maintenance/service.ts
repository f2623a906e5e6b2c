// Maintenance records: CRUD with a checked link to a fault and completedAt that follows the status.
import type Database from 'better-sqlite3';
import type { AuditLog } from '../audit/service.ts';
import type { Db } from '../db/client.ts';
import { BadRequest, NotFound } from '../http/errors.ts';
import type { AuthUser } from '../http/route.ts';
import { auditChanges } from '../db/auditTrail.ts';
import { contains, equals, oneOf, PagedList, timeWindow, type PageResult } from '../http/listQuery.ts';
import type { MaintenanceCreateInput, MaintenanceListFilters, MaintenanceUpdateInput, MaintenanceView } from './schemas.ts';

type Actor = Pick<AuthUser, 'id' | 'username'>;

const COLUMNS = `id, equipment, type, description, status, scheduled_at AS scheduledAt, completed_at AS completedAt, assignee, cost,
  fault_id AS faultId, created_at AS createdAt, updated_at AS updatedAt`;

const RESOURCE = 'maintenance';

const iso = (value: string | null | undefined) => (value ? new Date(value).toISOString() : null);

export class MaintenanceService {
  private readonly list;
  private readonly byId: Database.Statement;
  private readonly faultExists: Database.Statement;
  private readonly insert: Database.Statement;
  private readonly save: Database.Statement;
  private readonly remove: Database.Statement;

  constructor(
    private readonly db: Db,
    private readonly audit: AuditLog,
  ) {
    this.list = new PagedList<MaintenanceView>(db.sqlite, 'maintenance', COLUMNS, 'created_at DESC, id DESC');
    this.byId = db.sqlite.prepare(`SELECT ${COLUMNS} FROM maintenance WHERE id = ?`);
    this.faultExists = db.sqlite.prepare('SELECT 1 FROM faults WHERE id = ?').pluck();
    this.insert = db.sqlite.prepare(
      `INSERT INTO maintenance (equipment, type, description, status, scheduled_at, completed_at, assignee, cost, fault_id, created_at, updated_at)
       VALUES (@equipment, @type, @description, @status, @scheduledAt, @completedAt, @assignee, @cost, @faultId, @updatedAt, @updatedAt)`,
    );
    this.save = db.sqlite.prepare(
      `UPDATE maintenance SET equipment = @equipment, type = @type, description = @description, status = @status, scheduled_at = @scheduledAt,
         completed_at = @completedAt, assignee = @assignee, cost = @cost, fault_id = @faultId, updated_at = @updatedAt
       WHERE id = @id`,
    );
    this.remove = db.sqlite.prepare('DELETE FROM maintenance WHERE id = ?');
  }

  page(filters: MaintenanceListFilters): PageResult<MaintenanceView> {
    return this.list.page(
      [
        ...oneOf('status', 'status', filters.status),
        ...oneOf('type', 'type', filters.type),
        ...equals('fault_id', 'faultId', filters.faultId),
        ...contains(['equipment', 'description', 'assignee'], filters.q),
        ...timeWindow('scheduled_at', filters.from, filters.to),
      ],
      filters.page,
      filters.pageSize,
    );
  }

  get(id: number): MaintenanceView {
    const row = this.byId.get(id) as MaintenanceView | undefined;
    if (!row) throw new NotFound('Maintenance record not found');
    return row;
  }

  create(input: MaintenanceCreateInput, actor: Actor): MaintenanceView {
    return this.db.sqlite.transaction(() => {
      const now = new Date().toISOString();
      const status = input.status ?? 'planned';
      const record = {
        equipment: input.equipment,
        type: input.type,
        description: input.description ?? '',
        status,
        scheduledAt: iso(input.scheduledAt),
        completedAt: status === 'done' ? now : null,
        assignee: input.assignee ?? null,
        cost: input.cost ?? null,
        faultId: input.faultId ?? null,
        updatedAt: now,
      };
      this.assertFault(record.faultId);
      const created = this.get(Number(this.insert.run(record).lastInsertRowid));
      this.audit.record({ actor, action: 'create', resource: RESOURCE, resourceId: created.id, after: created });
      return created;
    })();
  }

  update(id: number, input: MaintenanceUpdateInput, actor: Actor): MaintenanceView {
    return this.db.sqlite.transaction(() => {
      // Unknown fields are dropped by the body schema: a body of nothing but unknown fields arrives here empty.
      if (Object.keys(input).length === 0) throw new BadRequest('Invalid body', [{ path: 'body', message: 'must contain at least one writable field' }]);
      const before = this.get(id);
      const now = new Date().toISOString();
      const next: MaintenanceView = {
        ...before,
        ...(input.equipment !== undefined && { equipment: input.equipment }),
        ...(input.type !== undefined && { type: input.type }),
        ...(input.description !== undefined && { description: input.description }),
        ...(input.status !== undefined && { status: input.status }),
        ...(input.scheduledAt !== undefined && { scheduledAt: iso(input.scheduledAt) }),
        ...(input.assignee !== undefined && { assignee: input.assignee }),
        ...(input.cost !== undefined && { cost: input.cost }),
        ...(input.faultId !== undefined && { faultId: input.faultId }),
      };
      if (next.status === 'done' && before.status !== 'done') next.completedAt = now;
      if (next.status !== 'done') next.completedAt = null;
      if (input.faultId !== undefined) this.assertFault(next.faultId);
      const changes = auditChanges(before, next);
      if (!changes) return before;
      this.save.run({ ...next, updatedAt: now });
      this.audit.record({ actor, action: 'update', resource: RESOURCE, resourceId: id, ...changes });
      return this.get(id);
    })();
  }

  delete(id: number, actor: Actor): void {
    this.db.sqlite.transaction(() => {
      const before = this.get(id);
      this.remove.run(id);
      this.audit.record({ actor, action: 'delete', resource: RESOURCE, resourceId: id, before });
    })();
  }

  /** Checked here rather than left to the foreign key, so the client gets a 400 naming the field instead of a constraint error. */
  private assertFault(faultId: number | null): void {
    if (faultId !== null && !this.faultExists.get(faultId)) {
      throw new BadRequest('Invalid body', [{ path: 'body.faultId', message: `no fault with id ${faultId}` }]);
    }
  }
}
