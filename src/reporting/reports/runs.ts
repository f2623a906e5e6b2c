// One run of a report plan: build the figures, render the files, keep them, mail them (retried with backoff), record and audit it.
import type { AlertService } from '../../facility/index.ts';
import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { and, desc, eq, gte, isNull, ne, notInArray, sql } from 'drizzle-orm';
import type { Actor, AuditLog } from '../../platform/db/auditTrail.ts';
import type { Db } from '../../platform/db/client.ts';
import { equals, PagedQuery, type PageResult } from '../../platform/db/listQuery.ts';
import { platformConfig, reportPlans, reportRuns, reportTemplates, type ReportRunFile } from '../../platform/db/schema/index.ts';
import { Conflict, NotFound, TooManyRequests } from '../../platform/errors.ts';
import type { Logger } from '../../platform/logger.ts';
import { deliveryOf, type Mailer, type MailAttachment } from '../../platform/mail/mailer.ts';
import type { SiteMail } from '../../platform/mail/siteMail.ts';
import { lastDay, reportPeriod, TEMPLATE_KEYS, type ReportContent, type ReportContentBuilder, type TemplateKey } from './content.ts';
import { renderFiles, type BuiltReport, type ReportRequest } from './renderFiles.ts';
import type { ReportWorkers } from './offThread.ts';
import type { ReportRunView } from './schemas.ts';

export type Clock = { now(): number };
export const systemClock: Clock = { now: () => Date.now() };

export type RunTrigger = 'schedule' | 'catch-up' | 'manual';

/**
 * "Run now" is for a person checking a plan, not a mail cannon (a loop made 180 runs in 20 s, each mailing up to 50
 * addresses through the site's SMTP): at most MANUAL_RUNS_PER_PLAN per plan and MANUAL_RUNS_PER_SITE in all within
 * MANUAL_WINDOW_MS, counted from the run history (so a restart does not reset them); beyond, 429 with Retry-After.
 */
export const MANUAL_RUNS_PER_PLAN = 5;
export const MANUAL_RUNS_PER_SITE = 30;
export const MANUAL_WINDOW_MS = 10 * 60_000;
/** Report mails one plan sends in 24 hours, whatever triggers its runs; a run past the cap keeps its files, unmailed. */
export const MAILS_PER_PLAN_PER_DAY = 100;
const DAY_MS = 86_400_000;
const CAPPED = 'not mailed: ';

type RunRow = typeof reportRuns.$inferSelect;

/** The stored name stays inside: the API names a file by its download name. */
function present(row: RunRow): ReportRunView {
  return { ...row, files: row.files.map(({ name, contentType, sizeBytes }) => ({ name, contentType, sizeBytes })) };
}

/** The plan with what a run needs besides it: its template's key, the site's name and time zone. */
function planToRun(db: Db, planId: number) {
  return db.orm
    .select({
      id: reportPlans.id,
      name: reportPlans.name,
      format: reportPlans.format,
      recipients: reportPlans.recipients,
      templateKey: reportTemplates.key,
      timezone: platformConfig.timezone,
      siteName: platformConfig.siteName,
    })
    .from(reportPlans)
    .innerJoin(reportTemplates, eq(reportTemplates.id, reportPlans.templateId))
    .innerJoin(platformConfig, eq(platformConfig.id, 1))
    .where(eq(reportPlans.id, planId))
    .get();
}
type PlanToRun = NonNullable<ReturnType<typeof planToRun>>;

/** The run's plan was deleted while the run was building (its run row went with it). */
class PlanDeleted extends Error {
  constructor() {
    super('the report plan was deleted during the run');
  }
}

export type RunnerDeps = {
  db: Db;
  audit: AuditLog;
  mailer: Mailer;
  logger: Logger;
  /** <data dir>/reports: one folder per plan. */
  directory: string;
  content: ReportContentBuilder;
  /**
   * Builds a run's content and files off the request thread (the service: a worker thread, src/reporting/reports/offThread.ts);
   * without it they are built here from `content` (tests that inject their figures).
   */
  workers?: Pick<ReportWorkers, 'build' | 'stats'>;
  clock: Clock;
  mailRetryDelaysMs: number[];
  keepFilesPerPlan: number;
  /** The one alert service, so an undelivered report is notified like any other alert. */
  alerts: AlertService;
  /** Site name, language and link base of the report mails (plain English without it). */
  siteMail?: () => SiteMail;
  /** History rows kept per plan (1000 unless given); older rows go: a `* * * * *` plan would add half a million a year. */
  historyRowsPerPlan?: number;
};

export class ReportRunner {
  private readonly active = new Map<number, Promise<ReportRunView>>();
  private readonly abort = new AbortController();
  private readonly alerts: AlertService;
  private readonly list: PagedQuery<typeof reportRuns>;
  private readonly historyRows: number;
  private readonly manualSince;
  private readonly mailedSince;
  private readonly cappedSince;

  constructor(private readonly deps: RunnerDeps) {
    this.alerts = deps.alerts;
    this.list = new PagedQuery(deps.db, reportRuns, [desc(reportRuns.startedAt), desc(reportRuns.id)]);
    this.historyRows = Math.max(deps.keepFilesPerPlan, deps.historyRowsPerPlan ?? 1000);
    // The manual runs since a time, newest first, for the per-plan rate limit.
    this.manualSince = deps.db.orm
      .select({ planId: reportRuns.planId, startedAt: reportRuns.startedAt })
      .from(reportRuns)
      .where(and(eq(reportRuns.trigger, 'manual'), gte(reportRuns.startedAt, sql.placeholder('since'))))
      .orderBy(desc(reportRuns.startedAt))
      .prepare();
    // raw SQL: counts of a plan's mailed runs since a time (the mail cap)
    this.mailedSince = deps.db.sqlite.prepare('SELECT count(*) FROM report_runs WHERE plan_id = ? AND started_at >= ? AND mail_attempts > 0').pluck();
    // raw SQL: counts of a plan's capped runs since a time, by a LIKE on the error
    this.cappedSince = deps.db.sqlite.prepare("SELECT count(*) FROM report_runs WHERE plan_id = ? AND started_at >= ? AND error LIKE 'not mailed: %'").pluck();
  }

  /** Runs left 'running' by a process that ended mid-run (crash, power cut) are failed: call once at start, before any run. */
  failInterrupted(): number {
    return this.deps.db.orm
      .update(reportRuns)
      .set({ status: 'failed', finishedAt: new Date(this.deps.clock.now()).toISOString(), error: 'interrupted: the service stopped during the run' })
      .where(eq(reportRuns.status, 'running'))
      .run().changes;
  }

  /** Checked and followed by the run's insert in one synchronous step: requests in flight at once cannot all pass. */
  private assertManualBudget(planId: number, now: number): void {
    const since = new Date(now - MANUAL_WINDOW_MS).toISOString();
    const manual = this.manualSince.all({ since });
    const ofPlan = manual.filter((run) => run.planId === planId);
    const over =
      ofPlan.length >= MANUAL_RUNS_PER_PLAN
        ? { runs: ofPlan, limit: MANUAL_RUNS_PER_PLAN, what: 'this plan' }
        : manual.length >= MANUAL_RUNS_PER_SITE
          ? { runs: manual, limit: MANUAL_RUNS_PER_SITE, what: 'all plans' }
          : null;
    if (!over) return;
    // The window frees a slot when the oldest counted run leaves it (runs come newest first).
    const oldest = Date.parse(over.runs[over.limit - 1].startedAt);
    throw new TooManyRequests(
      `At most ${over.limit} "run now" calls for ${over.what} in ${MANUAL_WINDOW_MS / 60_000} minutes; scheduled runs are not affected`,
      (oldest + MANUAL_WINDOW_MS - now) / 1000,
    );
  }

  /** The report workers' load (null when reports are built in this thread). */
  workerStats(): ReturnType<ReportWorkers['stats']> | null {
    return this.deps.workers?.stats() ?? null;
  }

  isRunning(planId: number): boolean {
    return this.active.has(planId);
  }

  /**
   * Starts a run of the plan now: the run row exists (status running) when this returns. 409 while the plan has a run
   * in progress: runs of one plan never overlap. `finished` settles when the run is recorded as ok or failed (never rejects).
   */
  start(planId: number, trigger: RunTrigger, actor: Actor | null): { run: ReportRunView; finished: Promise<ReportRunView> } {
    if (this.active.has(planId)) throw new Conflict('A run of this report plan is in progress');
    const plan = planToRun(this.deps.db, planId);
    if (!plan) throw new NotFound('Report plan not found');
    const startedAt = this.deps.clock.now();
    if (trigger === 'manual') this.assertManualBudget(planId, startedAt);
    const template = plan.templateKey as TemplateKey;
    if (!TEMPLATE_KEYS.includes(template)) throw new Conflict(`Report template "${plan.templateKey}" cannot be rendered`);
    const period = reportPeriod(template, plan.timezone, startedAt);
    const orm = this.deps.db.orm;
    const started = new Date(startedAt).toISOString();
    const runId = orm.transaction((tx) => {
      const inserted = tx
        .insert(reportRuns)
        .values({ planId, trigger, requestedBy: actor?.id ?? null, format: plan.format, periodFrom: period.from, periodTo: period.to, startedAt: started })
        .returning({ id: reportRuns.id })
        .get();
      // Not an edit of the plan: updated_at keeps its value (drizzle's $onUpdateFn would stamp it, and the scheduler reads a changed plan).
      tx.update(reportPlans)
        .set({ lastRunAt: started, updatedAt: sql`${reportPlans.updatedAt}` })
        .where(eq(reportPlans.id, planId))
        .run();
      return inserted.id;
    });
    const run = this.get(runId);
    // Nobody awaits a run started from a route: a failure to record it (disk full) is logged, never rejected. A plan
    // deleted meanwhile took its runs with it: that run is dropped (not mailed, its files removed), an info line, no error.
    const finished = this.execute(plan, template, runId, startedAt, trigger, actor)
      .catch((error: unknown): ReportRunView => {
        if (error instanceof PlanDeleted || !this.planExists(planId)) {
          fs.rmSync(path.join(this.deps.directory, String(planId)), { recursive: true, force: true });
          this.deps.logger.info({ planId, runId }, 'report plan deleted during its run: the run is dropped');
          return { ...run, status: 'failed', error: 'the report plan was deleted during the run' };
        }
        this.deps.logger.error({ err: error, planId, runId }, 'report run could not be recorded');
        return { ...run, status: 'failed', error: `could not be recorded: ${(error as Error).message}` };
      })
      .finally(() => this.active.delete(planId));
    this.active.set(planId, finished);
    return { run, finished };
  }

  get(runId: number): ReportRunView {
    return present(this.row(runId));
  }

  page(planId: number, page: number, pageSize: number): PageResult<ReportRunView> {
    const result = this.list.page(equals(reportRuns.planId, 'planId', planId), page, pageSize);
    return { ...result, items: result.items.map(present) };
  }

  /** Where a file of a run is kept, for the download route; 404 once retention removed it. */
  file(runId: number, name: string): ReportRunFile & { path: string } {
    const row = this.row(runId);
    const file = row.files.find((candidate) => candidate.name === name);
    if (!file) throw new NotFound(row.filesDeletedAt ? 'The files of this run were removed by retention' : 'No such file in this run');
    return { ...file, path: path.join(this.deps.directory, String(row.planId), file.storedName) };
  }

  /** Aborts mail retries in progress (those runs are recorded as failed) and waits for every run to be recorded. */
  async stop(): Promise<void> {
    this.abort.abort();
    await Promise.allSettled([...this.active.values()]);
  }

  /** Folders of plans that no longer exist (their rows went with the plan). */
  removeOrphanFolders(): void {
    const known = new Set(
      this.deps.db.orm
        .select({ id: reportPlans.id })
        .from(reportPlans)
        .all()
        .map((plan) => String(plan.id)),
    );
    let entries: string[];
    try {
      entries = fs.readdirSync(this.deps.directory);
    } catch {
      return;
    }
    for (const entry of entries) {
      if (/^\d+$/.test(entry) && !known.has(entry)) fs.rmSync(path.join(this.deps.directory, entry), { recursive: true, force: true });
    }
  }

  private planExists(planId: number): boolean {
    return this.deps.db.orm.select({ id: reportPlans.id }).from(reportPlans).where(eq(reportPlans.id, planId)).get() !== undefined;
  }

  private row(runId: number): RunRow {
    const row = this.deps.db.orm.select().from(reportRuns).where(eq(reportRuns.id, runId)).get();
    if (!row) throw new NotFound('Report run not found');
    return row;
  }

  private async execute(
    plan: PlanToRun,
    template: TemplateKey,
    runId: number,
    startedAt: number,
    trigger: RunTrigger,
    actor: Actor | null,
  ): Promise<ReportRunView> {
    const { logger, clock } = this.deps;
    let status: 'ok' | 'failed' = 'ok';
    let error: string | null = null;
    let mailAttempts = 0;
    let delivery: 'sent' | 'logged' | 'failed' | null = null;
    let attachments: MailAttachment[] = [];
    let content: ReportContent | undefined;
    try {
      const built = await this.build({ template, title: plan.name, now: startedAt, format: plan.format });
      if (!this.planExists(plan.id)) throw new PlanDeleted();
      content = built.content;
      attachments = built.files;
      this.keep(plan.id, runId, attachments);
    } catch (cause) {
      if (cause instanceof PlanDeleted) throw cause;
      status = 'failed';
      error = `could not build the report: ${(cause as Error).message}`;
      logger.error({ err: cause, planId: plan.id, runId }, 'report build failed');
    }
    let firstCapped = false;
    if (status === 'ok' && content) {
      const since = new Date(startedAt - DAY_MS).toISOString();
      if ((this.mailedSince.get(plan.id, since) as number) >= MAILS_PER_PLAN_PER_DAY) {
        status = 'failed';
        error = `${CAPPED}the plan has mailed ${MAILS_PER_PLAN_PER_DAY} times in the last 24 hours (the cap); the files are kept`;
        firstCapped = (this.cappedSince.get(plan.id, since) as number) === 0;
        content = undefined;
      }
    }
    if (status === 'ok' && content) {
      if (!this.planExists(plan.id)) throw new PlanDeleted();
      const outcome = await this.mail(plan, content, attachments);
      mailAttempts = outcome.attempts;
      delivery = outcome.error ? 'failed' : deliveryOf(this.deps.mailer);
      if (outcome.error) {
        status = 'failed';
        error = `mail not delivered after ${outcome.attempts} attempt${outcome.attempts === 1 ? '' : 's'}: ${outcome.error}`;
      }
    }
    const finishedAt = clock.now();
    const sizeBytes = attachments.reduce((sum, file) => sum + file.content.length, 0);
    this.deps.db.orm.transaction((tx) => {
      tx.update(reportRuns)
        .set({ status, finishedAt: new Date(finishedAt).toISOString(), durationMs: finishedAt - startedAt, mailAttempts, delivery, error })
        .where(eq(reportRuns.id, runId))
        .run();
      this.deps.audit.record({
        actor,
        action: 'run',
        resource: 'report_plans',
        resourceId: plan.id,
        after: { runId, trigger, status, format: plan.format, sizeBytes, mailAttempts, delivery, error },
      });
      // A capped plan raises one alert a day, not one per run.
      if (status === 'failed' && (!error?.startsWith(CAPPED) || firstCapped)) {
        this.alerts.create(
          { title: `Report "${plan.name}" not delivered`.slice(0, 200), message: error ?? '', level: 'warning', source: 'reports', area: null },
          null,
        );
      }
    });
    const log = { planId: plan.id, runId, trigger, status, delivery, sizeBytes, mailAttempts, durationMs: finishedAt - startedAt };
    // Honest about the mail: "delivered" only when a mail server took it.
    if (status === 'ok' && delivery === 'logged')
      logger.warn(log, 'report built, but its mail was written to the log only (EMS_SMTP_URL is not set): nobody received it');
    else if (status === 'ok') logger.info(log, 'report delivered');
    else logger.error({ ...log, error }, 'report run failed');
    this.applyRetention(plan.id);
    return this.get(runId);
  }

  private async build(request: ReportRequest): Promise<BuiltReport> {
    if (this.deps.workers) return this.deps.workers.build(request);
    const content = this.deps.content.build(request.template, request.title, request.now);
    return { content, files: await renderFiles(content, request.format) };
  }

  /** Writes the files under reports/<plan id>/<run id>-<name> and lists them on the run row. */
  private keep(planId: number, runId: number, files: MailAttachment[]): void {
    const folder = path.join(this.deps.directory, String(planId));
    fs.mkdirSync(folder, { recursive: true, mode: 0o750 });
    const kept: ReportRunFile[] = files.map((file) => {
      const storedName = `${runId}-${file.filename}`;
      fs.writeFileSync(path.join(folder, storedName), file.content, { mode: 0o640 });
      return { name: file.filename, storedName, contentType: file.contentType, sizeBytes: file.content.length };
    });
    this.deps.db.orm
      .update(reportRuns)
      .set({ files: kept, sizeBytes: kept.reduce((sum, file) => sum + file.sizeBytes, 0) })
      .where(eq(reportRuns.id, runId))
      .run();
  }

  /** One message to all recipients; a failure waits out the next configured delay and tries again. */
  private async mail(plan: PlanToRun, content: ReportContent, attachments: MailAttachment[]): Promise<{ attempts: number; error?: string }> {
    const site = this.deps.siteMail?.();
    let subject: string;
    let text: string;
    if (site) {
      const { t, format } = site;
      const period = `${format.date(content.period.from)} – ${format.date(lastDay(content.period.to))}`;
      subject = t('mail.report.subject', { plan: plan.name, site: content.site, period });
      text = [
        t('mail.report.body', { title: content.title, site: content.site, period, timezone: content.timezone }),
        '',
        t('mail.report.attached', { files: attachments.map((file) => file.filename).join(', ') }),
        '',
        t('mail.report.sentBy', { plan: plan.name }),
        '',
        `${site.footer}`,
        '',
      ].join('\n');
    } else {
      const period = `${content.period.from} to ${lastDay(content.period.to)}`;
      subject = `${plan.name}: ${content.site}, ${period}`;
      text =
        `${content.title} for ${content.site}, ${period} (${content.timezone}).\n\n` +
        `Attached: ${attachments.map((file) => file.filename).join(', ')}.\n\nSent by EMS for the report plan "${plan.name}".\n`;
    }
    const mail = { to: plan.recipients, subject, text, attachments };
    const delays = this.deps.mailRetryDelaysMs;
    let lastError = '';
    for (let attempt = 0; attempt <= delays.length; attempt += 1) {
      try {
        await this.deps.mailer.send(mail);
        return { attempts: attempt + 1 };
      } catch (cause) {
        lastError = (cause as Error).message;
        this.deps.logger.warn({ planId: plan.id, attempt: attempt + 1, err: cause }, 'report mail failed');
      }
      if (attempt === delays.length) break;
      try {
        await sleep(delays[attempt], undefined, { signal: this.abort.signal });
      } catch {
        return { attempts: attempt + 1, error: `${lastError} (the service stopped before the next try)` };
      }
    }
    return { attempts: delays.length + 1, error: lastError };
  }

  /** Keeps the files of the newest `keepFilesPerPlan` runs of a plan and the newest history rows. */
  private applyRetention(planId: number): void {
    try {
      const orm = this.deps.db.orm;
      const newestFirst = [desc(reportRuns.startedAt), desc(reportRuns.id)];
      const stale = orm
        .select({ id: reportRuns.id, files: reportRuns.files })
        .from(reportRuns)
        .where(and(eq(reportRuns.planId, planId), isNull(reportRuns.filesDeletedAt), ne(reportRuns.status, 'running')))
        .orderBy(...newestFirst)
        .all()
        .slice(this.deps.keepFilesPerPlan);
      const now = new Date(this.deps.clock.now()).toISOString();
      for (const run of stale) {
        for (const file of run.files) fs.rmSync(path.join(this.deps.directory, String(planId), file.storedName), { force: true });
        orm.update(reportRuns).set({ files: [], filesDeletedAt: now }).where(eq(reportRuns.id, run.id)).run();
      }
      const kept = orm
        .select({ id: reportRuns.id })
        .from(reportRuns)
        .where(eq(reportRuns.planId, planId))
        .orderBy(...newestFirst)
        .limit(this.historyRows);
      orm
        .delete(reportRuns)
        .where(and(eq(reportRuns.planId, planId), notInArray(reportRuns.id, kept)))
        .run();
      this.removeOrphanFolders();
    } catch (error) {
      this.deps.logger.error({ err: error, planId }, 'report retention failed');
    }
  }
}
