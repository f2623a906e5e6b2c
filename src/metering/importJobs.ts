// The history import as a job (issue 52, the staff app's import screen): the upload is read and checked in its request
// (bad rows 400, refused 400, overlap 409: nothing queued), then written in the background while the job's status
// resource tells its progress; a cancel stops it between two slices and takes back what it wrote (importWrite.ts,
// undoWrite). Jobs live in memory: the last JOBS_KEPT are kept; a restart forgets them (the audit trail keeps
// import.start / import / import.cancel).
import type { Actor } from '../platform/db/auditTrail.ts';
import { AppError, Conflict, NotFound, type ErrorCode } from '../platform/errors.ts';
import type { HistoryImport } from './historyImport.ts';
import type { ImportReport } from './importReport.ts';
import { ImportCancelled } from './importWrite.ts';

/** Finished jobs kept for their status resource (an admin's screen reads its own a few seconds later). */
export const JOBS_KEPT = 20;

export type ImportJobState = 'running' | 'cancelling' | 'done' | 'cancelled' | 'failed';

export type ImportJob = {
  id: number;
  state: ImportJobState;
  replace: boolean;
  rows: number;
  meters: number;
  /** Write steps done and planned (a meter-day, a virtual meter's day, the audit): the progress bar's fraction. */
  done: number;
  total: number;
  startedAt: string;
  finishedAt: string | null;
  startedBy: number | null;
  report: ImportReport | null;
  /** Meter-days taken back by a cancel. */
  undone: number | null;
  error: { error: string; code: ErrorCode; details?: { path: string; message: string }[] } | null;
};

export class ImportJobs {
  private readonly jobs = new Map<number, ImportJob & { cancel: boolean }>();
  private nextId = 1;

  constructor(private readonly history: Pick<HistoryImport, 'begin'>) {}

  /** Reads and checks the file (throws its 400/409), queues the write, answers the job as it starts. */
  async start(body: AsyncIterable<Buffer | string>, options: { replace: boolean }, actor: Actor | null): Promise<ImportJob> {
    const job: ImportJob & { cancel: boolean } = {
      id: 0,
      state: 'running',
      replace: options.replace,
      rows: 0,
      meters: 0,
      done: 0,
      total: 0,
      startedAt: new Date().toISOString(),
      finishedAt: null,
      startedBy: actor?.id ?? null,
      report: null,
      undone: null,
      error: null,
      cancel: false,
    };
    const begun = await this.history.begin(body, options, actor, {
      progress: (done, total) => {
        job.done = done;
        job.total = total;
      },
      cancelled: () => job.cancel,
    });
    job.id = this.nextId++;
    job.rows = begun.header.rows;
    job.meters = begun.meters;
    this.jobs.set(job.id, job);
    this.forgetOld();
    begun.done.then(
      (report) => {
        Object.assign(job, { state: 'done', report, done: job.total || job.done, finishedAt: new Date().toISOString() });
      },
      (error: unknown) => {
        job.finishedAt = new Date().toISOString();
        if (error instanceof ImportCancelled) Object.assign(job, { state: 'cancelled', undone: error.undone });
        else {
          job.state = 'failed';
          job.error =
            error instanceof AppError
              ? { error: error.message, code: error.code, ...(error.details ? { details: error.details } : {}) }
              : { error: 'The import failed: see the service log', code: 'INTERNAL' };
        }
      },
    );
    return this.view(job);
  }

  get(id: number): ImportJob {
    const job = this.jobs.get(id);
    if (!job) throw new NotFound(`No import job ${id} (jobs are kept in memory, the last ${JOBS_KEPT})`);
    return this.view(job);
  }

  /** Asks a running job to stop: it undoes its written slices and ends `cancelled`. A finished job: 409. */
  cancel(id: number): ImportJob {
    const job = this.jobs.get(id);
    if (!job) throw new NotFound(`No import job ${id} (jobs are kept in memory, the last ${JOBS_KEPT})`);
    if (job.state !== 'running' && job.state !== 'cancelling') throw new Conflict(`Import job ${id} has ended (${job.state}): nothing to cancel`);
    job.cancel = true;
    job.state = 'cancelling';
    return this.view(job);
  }

  private view({ cancel: _cancel, ...job }: ImportJob & { cancel: boolean }): ImportJob {
    return { ...job };
  }

  private forgetOld(): void {
    for (const [id, job] of this.jobs) {
      if (this.jobs.size <= JOBS_KEPT) break;
      if (job.state !== 'running' && job.state !== 'cancelling') this.jobs.delete(id);
    }
  }
}
