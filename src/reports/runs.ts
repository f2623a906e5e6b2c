// One run of a report plan: build the figures, render the files, keep them, mail them (retried with backoff), record and audit it.
import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { AlertService } from '../alerts/service.ts';
import type { AuditLog } from '../audit/service.ts';
import type { Db } from '../db/client.ts';
import type { ReportRunFile } from '../db/schema/reports.ts';
import { Conflict, NotFound } from '../http/errors.ts';
import type { AuthUser } from '../http/route.ts';
import { equals, PagedList, type PageResult } from '../http/listQuery.ts';
import type { Logger } from '../logger.ts';
import type { Mailer, MailAttachment } from '../mail/mailer.ts';
import { reportPeriod, TEMPLATE_KEYS, type ReportContent, type ReportContentBuilder, type TemplateKey } from './content.ts';
import { renderCsv } from './renderCsv.ts';
import { renderPdf } from './renderPdf.ts';
import type { ReportRunView } from './schemas.ts';

export type Clock = { now(): number };
export const systemClock: Clock = { now: () => Date.now() };

export type RunTrigger = 'schedule' | 'catch-up' | 'manual';
type Actor = Pick<AuthUser, 'id' | 'username'>;


type PlanToRun = { id: number; name: string; format: 'pdf' | 'csv' | 'json'; recipients: string; templateKey: string; timezone: string; siteName: string };

type RunRow = Omit<ReportRunView, 'files'> & { files: string };

const RUN_COLUMNS = `id, plan_id AS planId, trigger, requested_by AS requestedBy, status, format, period_from AS periodFrom,
  period_to AS periodTo, started_at AS startedAt, finished_at AS finishedAt, duration_ms AS durationMs, size_bytes AS sizeBytes,
  mail_attempts AS mailAttempts, error, files, files_deleted_at AS filesDeletedAt`;

function present(row: RunRow): ReportRunView {
  const files = JSON.parse(row.files) as ReportRunFile[];
  return { ...row, files: files.map(({ name, contentType, sizeBytes }) => ({ name, contentType, sizeBytes })) };
}

function lastDay(to: string): string {
  const date = new Date(`${to}T00:00:00Z`);
  date.setUTCDate(date.getUTCDate() - 1);
  return date.toISOString().slice(0, 10);
}

export type RunnerDeps = {
  db: Db;
  audit: AuditLog;
  mailer: Mailer;
  logger: Logger;
  /** <data dir>/reports: one folder per plan. */
  directory: string;
  content: ReportContentBuilder;
  clock: Clock;
  mailRetryDelaysMs: number[];
  keepFilesPerPlan: number;
  /** History rows kept per plan (1000 unless given); older rows go: a `* * * * *` plan would add half a million a year. */
  historyRowsPerPlan?: number;
};

export class ReportRunner {
  private readonly active = new Map<number, Promise<ReportRunView>>();
  private readonly abort = new AbortController();
  private readonly alerts: AlertService;
  private readonly list;
  private readonly planToRun;
  private readonly insertRun;
  private readonly touchPlan;
  private readonly saveFiles;
  private readonly finish;
  private readonly byId;
  private readonly withFiles;
  private readonly filesGone;
  private readonly trimHistory;
  private readonly planIds;

  constructor(private readonly deps: RunnerDeps) {
    const sqlite = deps.db.sqlite;
    this.alerts = new AlertService(deps.db, deps.audit);
    this.list = new PagedList<RunRow>(sqlite, 'report_runs', RUN_COLUMNS, 'started_at DESC, id DESC');
    this.planToRun = sqlite.prepare(
      `SELECT p.id, p.name, p.format, p.recipients, t.key AS templateKey, c.timezone, c.site_name AS siteName
       FROM report_plans p JOIN report_templates t ON t.id = p.template_id JOIN platform_config c ON c.id = 1 WHERE p.id = ?`,
    );
    this.insertRun = sqlite.prepare(
      `INSERT INTO report_runs (plan_id, trigger, requested_by, status, format, period_from, period_to, started_at)
       VALUES (@planId, @trigger, @requestedBy, 'running', @format, @periodFrom, @periodTo, @startedAt)`,
    );
    this.touchPlan = sqlite.prepare('UPDATE report_plans SET last_run_at = ? WHERE id = ?');
    this.saveFiles = sqlite.prepare('UPDATE report_runs SET files = ?, size_bytes = ? WHERE id = ?');
    this.finish = sqlite.prepare(
      'UPDATE report_runs SET status = @status, finished_at = @finishedAt, duration_ms = @durationMs, mail_attempts = @mailAttempts, error = @error WHERE id = @id',
    );
    this.byId = sqlite.prepare(`SELECT ${RUN_COLUMNS} FROM report_runs WHERE id = ?`);
    this.withFiles = sqlite.prepare(
      `SELECT id, files FROM report_runs WHERE plan_id = ? AND files_deleted_at IS NULL AND files <> '[]' ORDER BY started_at DESC, id DESC LIMIT -1 OFFSET ?`,
    );
    this.filesGone = sqlite.prepare(`UPDATE report_runs SET files = '[]', files_deleted_at = ? WHERE id = ?`);
    this.trimHistory = sqlite.prepare(
      `DELETE FROM report_runs WHERE plan_id = @planId AND id NOT IN (SELECT id FROM report_runs WHERE plan_id = @planId ORDER BY started_at DESC, id DESC LIMIT ${Math.max(deps.keepFilesPerPlan, deps.historyRowsPerPlan ?? 1000)})`,
    );
    this.planIds = sqlite.prepare('SELECT id FROM report_plans').pluck();
  }

  /** Runs left 'running' by a process that ended mid-run (crash, power cut) are failed: call once at start, before any run. */
  failInterrupted(): number {
    return this.deps.db.sqlite
      .prepare(`UPDATE report_runs SET status = 'failed', finished_at = ?, error = 'interrupted: the service stopped during the run' WHERE status = 'running'`)
      .run(new Date(this.deps.clock.now()).toISOString()).changes;
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
    const plan = this.planToRun.get(planId) as PlanToRun | undefined;
    if (!plan) throw new NotFound('Report plan not found');
    const startedAt = this.deps.clock.now();
    const template = plan.templateKey as TemplateKey;
    if (!TEMPLATE_KEYS.includes(template)) throw new Conflict(`Report template "${plan.templateKey}" cannot be rendered`);
    const period = reportPeriod(template, plan.timezone, startedAt);
    const runId = this.deps.db.sqlite.transaction(() => {
      const result = this.insertRun.run({
        planId,
        trigger,
        requestedBy: actor?.id ?? null,
        format: plan.format,
        periodFrom: period.from,
        periodTo: period.to,
        startedAt: new Date(startedAt).toISOString(),
      });
      this.touchPlan.run(new Date(startedAt).toISOString(), planId);
      return Number(result.lastInsertRowid);
    })();
    const finished = this.execute(plan, template, runId, startedAt, trigger, actor).finally(() => this.active.delete(planId));
    this.active.set(planId, finished);
    return { run: this.get(runId), finished };
  }

  get(runId: number): ReportRunView {
    const row = this.byId.get(runId) as RunRow | undefined;
    if (!row) throw new NotFound('Report run not found');
    return present(row);
  }

  page(planId: number, page: number, pageSize: number): PageResult<ReportRunView> {
    const result = this.list.page(equals('plan_id', 'planId', planId), page, pageSize);
    return { ...result, items: result.items.map(present) };
  }

  /** Where a file of a run is kept, for the download route; 404 once retention removed it. */
  file(runId: number, name: string): ReportRunFile & { path: string } {
    const row = this.byId.get(runId) as RunRow | undefined;
    if (!row) throw new NotFound('Report run not found');
    const file = (JSON.parse(row.files) as ReportRunFile[]).find((candidate) => candidate.name === name);
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
    const known = new Set((this.planIds.all() as number[]).map(String));
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

  private async execute(plan: PlanToRun, template: TemplateKey, runId: number, startedAt: number, trigger: RunTrigger, actor: Actor | null): Promise<ReportRunView> {
    const { logger, clock } = this.deps;
    let status: 'ok' | 'failed' = 'ok';
    let error: string | null = null;
    let mailAttempts = 0;
    let attachments: MailAttachment[] = [];
    let content: ReportContent | undefined;
    try {
      content = this.deps.content.build(template, plan.name, startedAt);
      attachments = await this.render(content, plan.format);
      this.keep(plan.id, runId, attachments);
    } catch (cause) {
      status = 'failed';
      error = `could not build the report: ${(cause as Error).message}`;
      logger.error({ err: cause, planId: plan.id, runId }, 'report build failed');
    }
    if (status === 'ok' && content) {
      const outcome = await this.mail(plan, content, attachments);
      mailAttempts = outcome.attempts;
      if (outcome.error) {
        status = 'failed';
        error = `mail not delivered after ${outcome.attempts} attempt${outcome.attempts === 1 ? '' : 's'}: ${outcome.error}`;
      }
    }
    const finishedAt = clock.now();
    const sizeBytes = attachments.reduce((sum, file) => sum + file.content.length, 0);
    this.deps.db.sqlite.transaction(() => {
      this.finish.run({ id: runId, status, finishedAt: new Date(finishedAt).toISOString(), durationMs: finishedAt - startedAt, mailAttempts, error });
      this.deps.audit.record({
        actor,
        action: 'run',
        resource: 'report_plans',
        resourceId: plan.id,
        after: { runId, trigger, status, format: plan.format, sizeBytes, mailAttempts, error },
      });
      if (status === 'failed') {
        this.alerts.create({ title: `Report "${plan.name}" not delivered`.slice(0, 200), message: error ?? '', level: 'warning', source: 'reports', area: null }, null);
      }
    })();
    const log = { planId: plan.id, runId, trigger, status, sizeBytes, mailAttempts, durationMs: finishedAt - startedAt };
    if (status === 'ok') logger.info(log, 'report delivered');
    else logger.error({ ...log, error }, 'report run failed');
    this.applyRetention(plan.id);
    return this.get(runId);
  }

  private async render(content: ReportContent, format: PlanToRun['format']): Promise<MailAttachment[]> {
    const base = `${content.template}_${content.period.from}_${lastDay(content.period.to)}`;
    const csv = { filename: `${base}.csv`, content: renderCsv(content), contentType: 'text/csv; charset=utf-8' };
    if (format === 'csv') return [csv];
    if (format === 'json') return [{ filename: `${base}.json`, content: Buffer.from(JSON.stringify(content, null, 2)), contentType: 'application/json' }];
    return [{ filename: `${base}.pdf`, content: await renderPdf(content), contentType: 'application/pdf' }, csv];
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
    this.saveFiles.run(JSON.stringify(kept), kept.reduce((sum, file) => sum + file.sizeBytes, 0), runId);
  }

  /** One message to all recipients; a failure waits out the next configured delay and tries again. */
  private async mail(plan: PlanToRun, content: ReportContent, attachments: MailAttachment[]): Promise<{ attempts: number; error?: string }> {
    const period = `${content.period.from} to ${lastDay(content.period.to)}`;
    const mail = {
      to: JSON.parse(plan.recipients) as string[],
      subject: `${plan.name}: ${content.site}, ${period}`,
      text:
        `${content.title} for ${content.site}, ${period} (${content.timezone}).\n\n` +
        `Attached: ${attachments.map((file) => file.filename).join(', ')}.\n\nSent by EMS for the report plan "${plan.name}".\n`,
      attachments,
    };
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
      const stale = this.withFiles.all(planId, this.deps.keepFilesPerPlan) as { id: number; files: string }[];
      const now = new Date(this.deps.clock.now()).toISOString();
      for (const run of stale) {
        for (const file of JSON.parse(run.files) as ReportRunFile[]) {
          fs.rmSync(path.join(this.deps.directory, String(planId), file.storedName), { force: true });
        }
        this.filesGone.run(now, run.id);
      }
      this.trimHistory.run({ planId });
      this.removeOrphanFolders();
    } catch (error) {
      this.deps.logger.error({ err: error, planId }, 'report retention failed');
    }
  }
}
