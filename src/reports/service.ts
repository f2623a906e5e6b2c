// Report templates (read-only, seeded) and report plans: a template, a cron schedule, a format and recipients.
import { asc, desc, eq, sql } from 'drizzle-orm';
import cron from 'node-cron';
import type { Actor, AuditLog } from '../db/auditTrail.ts';
import { AuditedTable } from '../db/auditedTable.ts';
import type { Db } from '../db/client.ts';
import { contains, equals, type PageResult } from '../db/listQuery.ts';
import { reportPlans, reportTemplates } from '../db/schema/index.ts';
import { BadRequest, type ErrorDetail } from '../errors.ts';
import type { ReportPlanCreateInput, ReportPlanListFilters, ReportPlanUpdateInput, ReportPlanView, ReportTemplateView } from './schemas.ts';

export class ReportService {
  private readonly plans;
  private readonly templates;
  private readonly templateExists;

  constructor(db: Db, audit: AuditLog) {
    this.templates = db.orm.select().from(reportTemplates).orderBy(asc(reportTemplates.id)).prepare();
    this.templateExists = db.orm
      .select({ id: reportTemplates.id })
      .from(reportTemplates)
      .where(eq(reportTemplates.id, sql.placeholder('id')))
      .prepare();
    this.plans = new AuditedTable(db, audit, reportPlans, {
      resource: 'report_plans',
      notFound: 'Report plan not found',
      orderBy: [desc(reportPlans.createdAt), desc(reportPlans.id)],
      check: (plan) => this.assertValid(plan),
    });
  }

  listTemplates(): ReportTemplateView[] {
    return this.templates.all();
  }

  page(filters: ReportPlanListFilters): PageResult<ReportPlanView> {
    return this.plans.page(
      [...contains([reportPlans.name], filters.q), ...equals(reportPlans.templateId, 'templateId', filters.templateId), ...equals(reportPlans.enabled, 'enabled', filters.enabled)],
      filters.page,
      filters.pageSize,
    );
  }

  get(id: number): ReportPlanView {
    return this.plans.get(id);
  }

  create(input: ReportPlanCreateInput, actor: Actor): ReportPlanView {
    return this.plans.create({ ...input, cron: input.cron.trim() }, actor);
  }

  update(id: number, input: ReportPlanUpdateInput, actor: Actor): ReportPlanView {
    return this.plans.update(id, { ...input, cron: input.cron?.trim() }, actor);
  }

  delete(id: number, actor: Actor): void {
    this.plans.delete(id, actor);
  }

  /** What JSON Schema cannot say: the cron expression parses, the template exists. Both reported at once. */
  private assertValid(plan: { templateId: number; cron: string }): void {
    const details: ErrorDetail[] = [];
    if (!cron.validate(plan.cron)) {
      const reason = cron.validateDetailed(plan.cron).errors[0]?.message;
      details.push({ path: 'body.cron', message: `is not a valid cron expression${reason ? `: ${reason}` : ''}` });
    }
    if (!this.templateExists.get({ id: plan.templateId })) details.push({ path: 'body.templateId', message: `no report template with id ${plan.templateId}` });
    if (details.length) throw new BadRequest('Invalid body', details);
  }
}
