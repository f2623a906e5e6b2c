// Report building off the request thread (issue 29: no background task blocks the event loop for more than 50 ms; a
// monthly PDF held it 0.1–0.8 s): each run's content and files are built in a worker thread (reportWorker.ts) on its
// own read-only connection. One worker, one report at a time (runs of other plans wait their turn), with bounded
// memory; it stays for IDLE_MS after a report (catch-up runs and bursts reuse its loaded code), then ends, so an idle
// box holds no second heap. A worker that fails (out of memory, a crash) rejects the report it was building with an
// error saying so (the run is recorded as failed); the next report starts a new one. This side imports only types of
// what the worker runs.
import type { Worker } from 'node:worker_threads';
import { startWorker, workerFailure, type WorkerAnswer } from '../../platform/workerThread.ts';
import type { BuiltReport, ReportRequest } from './renderFiles.ts';

export type ReportWorkerTask = { databaseFile: string; request: ReportRequest };

/** Old-generation heap of the report worker: a monthly report of 500 meters builds within 48 MiB. */
export const REPORT_WORKER_MEMORY_MB = 96;
/** How long the worker waits for the next report before it ends. */
const IDLE_MS = 30_000;

type Pending = { resolve: (built: BuiltReport) => void; reject: (error: Error) => void };

/** One worker at a time: an edge box has 2 cores, and one of them serves the requests. */
export class ReportWorkers {
  private queue: Promise<unknown> = Promise.resolve();
  private worker: Worker | null = null;
  private pending: Pending | null = null;
  private idle: NodeJS.Timeout | null = null;
  private inFlight = 0;
  private peak = 0;
  private waiting = 0;
  private closed = false;

  constructor(
    private readonly databaseFile: string,
    /** maxOldGenerationSizeMb of the worker. */
    private readonly memoryMb = REPORT_WORKER_MEMORY_MB,
  ) {}

  /** Builds one report in the worker once the one before it ended; settles with its content and files. */
  build(request: ReportRequest): Promise<BuiltReport> {
    this.waiting += 1;
    const turn = this.queue.then(async () => {
      this.waiting -= 1;
      if (this.closed) throw new Error('the service is stopping');
      this.inFlight += 1;
      this.peak = Math.max(this.peak, this.inFlight);
      try {
        return await this.inWorker(request);
      } finally {
        this.inFlight -= 1;
      }
    });
    this.queue = turn.catch(() => undefined);
    return turn;
  }

  /** Workers building now, the most ever at once, and builds waiting for their turn. */
  stats(): { running: number; peak: number; waiting: number } {
    return { running: this.inFlight, peak: this.peak, waiting: this.waiting };
  }

  /** Ends the worker once the report in progress is built; later builds are refused. */
  async close(): Promise<void> {
    this.closed = true;
    await this.queue;
    await this.stopWorker();
  }

  private inWorker(request: ReportRequest): Promise<BuiltReport> {
    if (this.idle) clearTimeout(this.idle);
    this.idle = null;
    const worker = this.worker ?? this.startWorker();
    worker.ref();
    return new Promise<BuiltReport>((resolve, reject) => {
      this.pending = { resolve, reject };
      worker.postMessage({ databaseFile: this.databaseFile, request } satisfies ReportWorkerTask);
    }).finally(() => {
      this.pending = null;
      if (this.worker !== worker) return;
      // An idle worker does not keep the process alive, and ends after IDLE_MS.
      worker.unref();
      this.idle = setTimeout(() => void this.stopWorker(), IDLE_MS);
      this.idle.unref();
    });
  }

  private startWorker(): Worker {
    const limits = { maxOldGenerationSizeMb: this.memoryMb };
    const worker = startWorker(import.meta.url, 'reportWorker', { reportWorker: true }, limits);
    const fail = (error: Error) => {
      if (this.worker === worker) this.worker = null;
      this.pending?.reject(error);
    };
    worker.on('message', (answer: WorkerAnswer) => {
      if (!answer.ok) return this.pending?.reject(Object.assign(new Error(answer.message), { name: answer.name }));
      const built = answer.value as BuiltReport;
      // Buffers come back as Uint8Arrays (structured clone).
      this.pending?.resolve({
        ...built,
        files: built.files.map((file) => ({ ...file, content: Buffer.from(file.content.buffer, file.content.byteOffset, file.content.byteLength) })),
      });
    });
    worker.on('error', (error) => fail(workerFailure(error, 'the report worker', limits)));
    worker.on('exit', (code) => fail(new Error(`the report worker stopped (exit code ${code}) before it answered`)));
    this.worker = worker;
    return worker;
  }

  private async stopWorker(): Promise<void> {
    if (this.idle) clearTimeout(this.idle);
    this.idle = null;
    const worker = this.worker;
    this.worker = null;
    if (worker) await worker.terminate();
  }
}
