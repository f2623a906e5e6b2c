// bcrypt at cost 10 on worker threads at a lower CPU priority (off the event loop); 8 to 72 bytes because bcrypt ignores what follows.
import { createRequire } from 'node:module';
import os from 'node:os';
import { Worker } from 'node:worker_threads';
import { BadRequest } from '../../platform/errors.ts';

export const BCRYPT_COST = 10;
export const PASSWORD_MIN_BYTES = 8;
export const PASSWORD_MAX_BYTES = 72;

export function assertPasswordLength(password: string, field = 'password'): void {
  const bytes = Buffer.byteLength(password, 'utf8');
  if (bytes < PASSWORD_MIN_BYTES || bytes > PASSWORD_MAX_BYTES) {
    throw new BadRequest('Invalid body', [{ path: `body.${field}`, message: `must be ${PASSWORD_MIN_BYTES} to ${PASSWORD_MAX_BYTES} bytes long` }]);
  }
}

type PasswordTask = { id: number; op: 'hash'; password: string; cost: number } | { id: number; op: 'compare'; password: string; hash: string };
type PasswordResult = { id: number; value: string | boolean } | { id: number; error: string };
type Job = { task: PasswordTask; resolve: (value: string | boolean) => void; reject: (error: Error) => void };

/**
 * The worker, as source text: a file would be .ts under tsx, which does not load itself into worker threads. It lowers
 * its own priority first (nice 10; on Linux the nice value belongs to the calling thread only, so the event loop keeps
 * its own) and requires bcrypt by absolute path, whatever the working directory.
 */
const WORKER_SOURCE = `
const os = require('node:os');
const { parentPort, workerData } = require('node:worker_threads');
const bcrypt = require(workerData.bcrypt);
try { os.setPriority(0, 10); } catch { /* not permitted here: still off the event loop, at its priority */ }
parentPort.on('message', (task) => {
  let result;
  try {
    result = { id: task.id, value: task.op === 'hash' ? bcrypt.hashSync(task.password, task.cost) : bcrypt.compareSync(task.password, task.hash) };
  } catch (error) {
    result = { id: task.id, error: String(error && error.message) };
  }
  parentPort.postMessage(result);
});
`;
const BCRYPT_PATH = createRequire(import.meta.url).resolve('bcrypt');
/** A worker holds ~10 MiB (its own V8 heap): one idle this long is ended, and the next login starts one again (~40 ms). */
const WORKER_IDLE_MS = 30_000;
export type NewTask = { op: 'hash'; password: string; cost: number } | { op: 'compare'; password: string; hash: string };

/**
 * bcrypt costs ~55-65 ms of CPU. On libuv's pool (4 threads at the event loop's priority) 8 concurrent logins on
 * 2 cores left the event loop a small share of the CPU: in the benchmark, GET /api/alerts p99 went to 230-400 ms
 * during a login burst. One worker per core at nice 10: requests go first, logins use what is left. Workers start on
 * first use and are unref'd while idle, so they hold neither start-up nor an exiting emsctl.
 */
export class PasswordWorkers {
  private readonly live = new Set<Worker>();
  private readonly idle: Worker[] = [];
  private readonly running = new Map<Worker, Job>();
  private readonly queue: Job[] = [];
  private readonly idleTimers = new Map<Worker, NodeJS.Timeout>();
  private nextId = 1;

  constructor(
    private readonly max: number,
    private readonly idleMs = WORKER_IDLE_MS,
  ) {}

  /** Worker threads alive now (started and not yet ended). */
  get size(): number {
    return this.live.size;
  }

  run(task: NewTask): Promise<string | boolean> {
    return new Promise((resolve, reject) => {
      this.queue.push({ task: { ...task, id: this.nextId++ } as PasswordTask, resolve, reject });
      this.dispatch();
    });
  }

  private dispatch(): void {
    while (this.queue.length > 0) {
      const worker = this.idle.pop() ?? (this.live.size < this.max ? this.spawn() : undefined);
      if (!worker) return;
      const job = this.queue.shift()!;
      clearTimeout(this.idleTimers.get(worker));
      this.idleTimers.delete(worker);
      this.running.set(worker, job);
      worker.ref();
      worker.postMessage(job.task);
    }
  }

  private spawn(): Worker {
    const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { bcrypt: BCRYPT_PATH } });
    this.live.add(worker);
    worker.on('message', (result: PasswordResult) => {
      const job = this.running.get(worker);
      this.running.delete(worker);
      worker.unref();
      this.idle.push(worker);
      this.idleTimers.set(worker, setTimeout(() => this.retire(worker), this.idleMs).unref());
      if (job) {
        if ('error' in result) job.reject(new Error(result.error));
        else job.resolve(result.value);
      }
      this.dispatch();
    });
    worker.on('error', (error) => this.lost(worker, error));
    worker.on('exit', (code) => this.lost(worker, new Error(`password worker exited with code ${code}`)));
    return worker;
  }

  private retire(worker: Worker): void {
    this.idleTimers.delete(worker);
    const at = this.idle.indexOf(worker);
    if (at === -1 || !this.live.delete(worker)) return;
    this.idle.splice(at, 1);
    void worker.terminate();
  }

  /** A worker that died fails its own job only; the next job gets a new worker. */
  private lost(worker: Worker, error: Error): void {
    if (!this.live.delete(worker)) return;
    clearTimeout(this.idleTimers.get(worker));
    this.idleTimers.delete(worker);
    const job = this.running.get(worker);
    this.running.delete(worker);
    const at = this.idle.indexOf(worker);
    if (at !== -1) this.idle.splice(at, 1);
    job?.reject(error);
    this.dispatch();
  }
}

const workers = new PasswordWorkers(Math.min(4, Math.max(1, os.availableParallelism())));

export async function hashPassword(password: string): Promise<string> {
  assertPasswordLength(password);
  return (await workers.run({ op: 'hash', password, cost: BCRYPT_COST })) as string;
}

/**
 * bcrypt compares only the first 72 bytes, so a longer candidate would match a stored password it merely starts
 * with. No stored password is longer (assertPasswordLength), so a longer candidate is simply wrong — on every path
 * that compares (login, password change, OAuth bind). It still costs one bcrypt round, so the timing tells nothing.
 */
export async function verifyPassword(password: string, hash: string): Promise<boolean> {
  const tooLong = Buffer.byteLength(password, 'utf8') > PASSWORD_MAX_BYTES;
  const match = (await workers.run({ op: 'compare', password, hash })) as boolean;
  return match && !tooLong;
}

/**
 * Compared against when the user does not exist, so both failures cost the same time. A fixed cost-10 hash of
 * 'not-a-real-password': hashing it at import took ~70 ms of every cold start (and of every emsctl run).
 */
export const DUMMY_HASH = '$2b$10$2Qw3pK/xdZCLXqKty7sgyuO.v3rHCvSxBQwPQavrJLeb7jF34WwNS';
