// Starting a worker thread on one of our entry files, compiled (dist/*.js) or from source (*.ts through tsx), and
// waiting for its one answer. Used by the background work kept off the request thread (issue 29): the backup and its
// checks (src/operations/backup/offThread.ts) and report building (src/reporting/reports/offThread.ts).
import fs from 'node:fs';
import os from 'node:os';
import { Worker, type ResourceLimits } from 'node:worker_threads';

/** The answer a worker entry posts once: its value, or its error's class name and message. */
export type WorkerAnswer = { ok: true; value: unknown } | { ok: false; name: string; message: string };

/**
 * Starts `entry` (the .ts beside `caller`; its .js when compiled) with `data` as its workerData. A worker does not run
 * its parent's --import on Node 20 (and emsctl in a checkout registers tsx through its API): from source the entry is
 * a one-line script that registers tsx's loader, then imports the entry.
 */
export function startWorker(caller: string, entry: string, data: unknown, resourceLimits?: ResourceLimits): Worker {
  const fromSource = caller.endsWith('.ts');
  const self = new URL(fromSource ? `./${entry}.ts` : `./${entry}.js`, caller);
  return fromSource
    ? new Worker(
        `import(${JSON.stringify(import.meta.resolve('tsx/esm/api'))}).then((tsx) => { tsx.register(); return import(${JSON.stringify(self.href)}); });`,
        { eval: true, workerData: data, resourceLimits },
      )
    : new Worker(self, { workerData: data, resourceLimits });
}

/** A worker's 'error' event as the caller's message: out of memory says so, with the bound. */
export function workerFailure(error: Error & { code?: string }, what: string, resourceLimits?: ResourceLimits): Error {
  if (error.code === 'ERR_WORKER_OUT_OF_MEMORY') {
    const limit = resourceLimits?.maxOldGenerationSizeMb;
    return new Error(`${what} ran out of memory${limit ? ` (its limit is ${limit} MiB)` : ''}`);
  }
  return new Error(`${what} failed: ${error.message}`);
}

/**
 * One task in a short-lived worker: settles with its one answer. `fail(name, message)` turns an error the entry
 * reported into the caller's own error class; a worker that stops without answering (out of memory, a crash in native
 * code) rejects with an Error saying so.
 */
export function runWorker<T>(
  caller: string,
  entry: string,
  data: unknown,
  options: { resourceLimits?: ResourceLimits; fail?: (name: string, message: string) => Error; what?: string } = {},
): Promise<T> {
  const what = options.what ?? 'the worker';
  return new Promise<T>((resolve, reject) => {
    const worker = startWorker(caller, entry, data, options.resourceLimits);
    let answered = false;
    worker.once('message', (answer: WorkerAnswer) => {
      answered = true;
      if (answer.ok) resolve(answer.value as T);
      else reject(options.fail ? options.fail(answer.name, answer.message) : Object.assign(new Error(answer.message), { name: answer.name }));
    });
    worker.once('error', (error: Error & { code?: string }) => {
      answered = true;
      reject(workerFailure(error, what, options.resourceLimits));
    });
    worker.once('exit', (code) => {
      if (!answered) reject(new Error(`${what} stopped (exit code ${code}) before it answered`));
    });
  });
}

/**
 * Lowers the calling thread's CPU priority (nice 10) where the system names threads (Linux: /proc/thread-self): the
 * request thread wins a busy core over background work. Best effort; elsewhere nothing changes.
 */
export function yieldCpuToRequests(): void {
  try {
    const tid = Number(fs.readlinkSync('/proc/thread-self').split('/').pop());
    if (Number.isSafeInteger(tid) && tid > 0) os.setPriority(tid, Math.max(os.getPriority(tid), 10));
  } catch {
    // no /proc, or not allowed: the worker runs at the service's priority
  }
}

/** The entry's side: runs `task` and posts the answer (an error as its name and message). */
export async function answerParent(post: (answer: WorkerAnswer) => void, task: () => unknown): Promise<void> {
  let answer: WorkerAnswer;
  try {
    answer = { ok: true, value: await task() };
  } catch (error) {
    answer = { ok: false, name: (error as Error).name, message: (error as Error).message };
  }
  post(answer);
}
