// Report templates (read-only, seeded) and report plans: a template, a cron schedule, a format and recipients.
import { asc, desc, eq, or, sql } from 'drizzle-orm';
import cron from 'node-cron';
import type { Actor, AuditLog } from '../../platform/db/auditTrail.ts';
import { AuditedTable } from '../../platform/db/auditedTable.ts';
import type { Db } from '../../platform/db/client.ts';
import { contains, equals, type PageResult } from '../../platform/db/listQuery.ts';
import { reportPlans, reportTemplates } from '../../platform/db/schema/index.ts';
import { BadRequest, type ErrorDetail } from '../../platform/errors.ts';
import type { ReportPlanCreateInput, ReportPlanListFilters, ReportPlanUpdateInput, ReportPlanView, ReportTemplateView } from './schemas.ts';

export class ReportService {
  private readonly plans;
  private readonly templates;
  private readonly templateByKey;

  constructor(
    db: Db,
    audit: AuditLog,
    /** The shortest gap a plan's cron may leave between two runs: each run mails up to 50 addresses. */
    private readonly minIntervalMin = DEFAULT_MIN_INTERVAL_MIN,
  ) {
    this.templates = db.orm.select().from(reportTemplates).orderBy(asc(reportTemplates.id)).prepare();
    this.templateByKey = db.orm
      .select({ id: reportTemplates.id })
      .from(reportTemplates)
      .where(or(eq(reportTemplates.id, sql.placeholder('id')), eq(reportTemplates.key, sql.placeholder('key'))))
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
      [
        ...contains([reportPlans.name], filters.q),
        ...equals(reportPlans.templateId, 'templateId', filters.templateId),
        ...equals(reportPlans.enabled, 'enabled', filters.enabled),
      ],
      filters.page,
      filters.pageSize,
    );
  }

  get(id: number): ReportPlanView {
    return this.plans.get(id);
  }

  /** A new plan is a pdf plan unless it says otherwise. */
  create(input: ReportPlanCreateInput, actor: Actor): ReportPlanView {
    return this.plans.create(
      { ...input, format: input.format ?? 'pdf', templateId: this.templateId(input.templateId, input.cron), cron: input.cron.trim() },
      actor,
    );
  }

  update(id: number, input: ReportPlanUpdateInput, actor: Actor): ReportPlanView {
    const templateId = input.templateId === undefined ? undefined : this.templateId(input.templateId, input.cron);
    return this.plans.update(id, { ...input, templateId, cron: input.cron?.trim() }, actor);
  }

  delete(id: number, actor: Actor): void {
    this.plans.delete(id, actor);
  }

  /** A template key → its id (a number passes as is: the check names an unknown one with the other problems). */
  private templateId(idOrKey: number | string, cronText: string | undefined): number {
    if (typeof idOrKey === 'number') return idOrKey;
    const found = this.templateByKey.get({ id: null, key: idOrKey });
    if (found) return found.id;
    throw new BadRequest('Invalid body', [
      ...(cronText === undefined ? [] : cronProblems(cronText.trim())),
      { path: 'body.templateId', message: `no report template with key "${idOrKey}"` },
    ]);
  }

  /** What JSON Schema cannot say: the cron expression parses, the template exists. Both reported at once. */
  private assertValid(plan: { templateId: number; cron: string }): void {
    const details = cronProblems(plan.cron);
    if (details.length === 0) {
      const gap = shortestGapSec(plan.cron);
      if (gap < this.minIntervalMin * 60) {
        details.push({
          path: 'body.cron',
          message: `runs ${formatGap(gap)} apart at times; a report plan may run at most every ${this.minIntervalMin} minutes`,
        });
      }
    }
    if (!this.templateByKey.get({ id: plan.templateId, key: null }))
      details.push({ path: 'body.templateId', message: `no report template with id ${plan.templateId}` });
    if (details.length) throw new BadRequest('Invalid body', details);
  }
}

/** EMS_REPORT_MIN_INTERVAL's default: a plan runs at most 96 times a day. */
export const DEFAULT_MIN_INTERVAL_MIN = 15;

/**
 * The shortest gap between two runs of a cron expression, in seconds, from its fields: the times of day it fires,
 * sorted, and the gap from the last of a day to the first of the next (counted as if every day fired, so the answer
 * is never longer than the truth).
 */
export function shortestGapSec(expression: string): number {
  const fields = cron.parse(expression);
  const times: number[] = [];
  for (const hour of fields.hour) for (const minute of fields.minute) for (const second of fields.second) times.push(hour * 3600 + minute * 60 + second);
  times.sort((a, b) => a - b);
  let shortest = 86_400 - times[times.length - 1] + times[0];
  for (let i = 1; i < times.length; i += 1) shortest = Math.min(shortest, times[i] - times[i - 1]);
  return shortest;
}

const formatGap = (seconds: number) => (seconds < 60 ? `${seconds} s` : `${Math.round(seconds / 60)} min`);

function cronProblems(expression: string): ErrorDetail[] {
  if (cron.validate(expression)) return [];
  const reason = cron.validateDetailed(expression).errors[0]?.message;
  return [{ path: 'body.cron', message: `is not a valid cron expression${reason ? `: ${reason}` : ''}` }];
}
