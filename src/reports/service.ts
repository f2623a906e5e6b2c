// Report templates (read-only, seeded) and report plans: a template, a cron schedule, a format and recipients.
import type Database from 'better-sqlite3';
import cron from 'node-cron';
import type { AuditLog } from '../audit/service.ts';
import type { Db } from '../db/client.ts';
import { BadRequest, NotFound, type ErrorDetail } from '../http/errors.ts';
import type { AuthUser } from '../http/route.ts';
import { auditChanges } from '../audit/changes.ts';
import { contains, equals, PagedList, type PageResult } from '../http/listQuery.ts';
import type { ReportPlanCreateInput, ReportPlanListFilters, ReportPlanUpdateInput, ReportPlanView, ReportTemplateView } from './schemas.ts';

type Actor = Pick<AuthUser, 'id' | 'username'>;
/** As SQLite returns it: recipients as JSON text, enabled as 0/1. */
type PlanRow = Omit<ReportPlanView, 'recipients' | 'enabled'> & { recipients: string; enabled: number };

const COLUMNS = `id, name, template_id AS templateId, cron, format, recipients, enabled, last_run_at AS lastRunAt,
  created_at AS createdAt, updated_at AS updatedAt`;

const RESOURCE = 'report_plans';

function present(row: PlanRow): ReportPlanView {
  return { ...row, recipients: JSON.parse(row.recipients) as string[], enabled: row.enabled === 1 };
}

export class ReportService {
  private readonly list;
  private readonly templates: Database.Statement;
  private readonly templateByKey: Database.Statement;
  private readonly byId: Database.Statement;
  private readonly insert: Database.Statement;
  private readonly save: Database.Statement;
  private readonly remove: Database.Statement;

  constructor(
    private readonly db: Db,
    private readonly audit: AuditLog,
  ) {
    this.list = new PagedList<PlanRow>(db.sqlite, 'report_plans', COLUMNS, 'created_at DESC, id DESC');
    this.templates = db.sqlite.prepare('SELECT id, key, name, description FROM report_templates ORDER BY id');
    this.templateByKey = db.sqlite.prepare('SELECT id FROM report_templates WHERE id = ? OR key = ?').pluck();
    this.byId = db.sqlite.prepare(`SELECT ${COLUMNS} FROM report_plans WHERE id = ?`);
    this.insert = db.sqlite.prepare(
      `INSERT INTO report_plans (name, template_id, cron, format, recipients, enabled, created_at, updated_at)
       VALUES (@name, @templateId, @cron, @format, @recipients, @enabled, @updatedAt, @updatedAt)`,
    );
    this.save = db.sqlite.prepare(
      `UPDATE report_plans SET name = @name, template_id = @templateId, cron = @cron, format = @format, recipients = @recipients,
         enabled = @enabled, updated_at = @updatedAt
       WHERE id = @id`,
    );
    this.remove = db.sqlite.prepare('DELETE FROM report_plans WHERE id = ?');
  }

  listTemplates(): ReportTemplateView[] {
    return this.templates.all() as ReportTemplateView[];
  }

  page(filters: ReportPlanListFilters): PageResult<ReportPlanView> {
    const result = this.list.page(
      [
        ...contains(['name'], filters.q),
        ...equals('template_id', 'templateId', filters.templateId),
        ...equals('enabled', 'enabled', filters.enabled === undefined ? undefined : Number(filters.enabled)),
      ],
      filters.page,
      filters.pageSize,
    );
    return { ...result, items: result.items.map(present) };
  }

  get(id: number): ReportPlanView {
    const row = this.byId.get(id) as PlanRow | undefined;
    if (!row) throw new NotFound('Report plan not found');
    return present(row);
  }

  create(input: ReportPlanCreateInput, actor: Actor): ReportPlanView {
    return this.db.sqlite.transaction(() => {
      const plan = {
        name: input.name,
        templateId: this.templateId(input.templateId),
        cron: input.cron.trim(),
        format: input.format ?? 'pdf',
        recipients: input.recipients,
        enabled: input.enabled ?? true,
      };
      this.assertValid(plan, input.templateId);
      const now = new Date().toISOString();
      const result = this.insert.run({ ...plan, recipients: JSON.stringify(plan.recipients), enabled: Number(plan.enabled), updatedAt: now });
      const created = this.get(Number(result.lastInsertRowid));
      this.audit.record({ actor, action: 'create', resource: RESOURCE, resourceId: created.id, after: created });
      return created;
    })();
  }

  update(id: number, input: ReportPlanUpdateInput, actor: Actor): ReportPlanView {
    return this.db.sqlite.transaction(() => {
      // Unknown fields are dropped by the body schema: a body of nothing but unknown fields arrives here empty.
      if (Object.keys(input).length === 0) throw new BadRequest('Invalid body', [{ path: 'body', message: 'must contain at least one writable field' }]);
      const before = this.get(id);
      const next: ReportPlanView = {
        ...before,
        ...(input.name !== undefined && { name: input.name }),
        ...(input.templateId !== undefined && { templateId: this.templateId(input.templateId) }),
        ...(input.cron !== undefined && { cron: input.cron.trim() }),
        ...(input.format !== undefined && { format: input.format }),
        ...(input.recipients !== undefined && { recipients: input.recipients }),
        ...(input.enabled !== undefined && { enabled: input.enabled }),
      };
      this.assertValid(next, input.templateId ?? before.templateId);
      const changes = auditChanges(before, next);
      if (!changes) return before;
      this.save.run({ ...next, recipients: JSON.stringify(next.recipients), enabled: Number(next.enabled), updatedAt: new Date().toISOString() });
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

  /** A template id or key → its id; 0 when there is none (assertValid reports it). */
  private templateId(idOrKey: number | string): number {
    return (this.templateByKey.get(typeof idOrKey === 'number' ? idOrKey : null, String(idOrKey)) as number | undefined) ?? 0;
  }

  /** What JSON Schema cannot say: the cron expression parses, the template exists. Both reported at once. */
  private assertValid(plan: { templateId: number; cron: string }, requested: number | string): void {
    const details: ErrorDetail[] = [];
    if (!cron.validate(plan.cron)) {
      const reason = cron.validateDetailed(plan.cron).errors[0]?.message;
      details.push({ path: 'body.cron', message: `is not a valid cron expression${reason ? `: ${reason}` : ''}` });
    }
    if (plan.templateId === 0) {
      details.push({ path: 'body.templateId', message: typeof requested === 'number' ? `no report template with id ${requested}` : `no report template with key "${requested}"` });
    }
    if (details.length) throw new BadRequest('Invalid body', details);
  }
}
