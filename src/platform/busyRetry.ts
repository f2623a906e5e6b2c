// Waiting for another process's SQLite write lock without holding the event loop: the service's connection waits at
// most SERVICE_BUSY_TIMEOUT_MS inside a statement (platform/db/client.ts); a write that still meets the lock is tried again here.
const RETRY_BUDGET_MS = 5000;

/** True for SQLite's "another connection holds the lock" errors. */
export function isBusyError(error: unknown): boolean {
  return ((error as { code?: unknown })?.code ?? '').toString().startsWith('SQLITE_BUSY');
}

/**
 * Runs `task` and, while it fails because another process holds the write lock, runs it again after a pause with the
 * event loop free (25 ms, doubling to 400 ms), for up to `budgetMs`; then the busy error is the caller's. The task must
 * be safe to repeat after a busy error: its transaction was rolled back (a busy error comes at a transaction's first
 * write, before anything of it is written).
 */
export async function retryWhileBusy<T>(task: () => T | Promise<T>, budgetMs = RETRY_BUDGET_MS): Promise<T> {
  const deadline = performance.now() + budgetMs;
  for (let pause = 25; ; pause = Math.min(400, pause * 2)) {
    try {
      return await task();
    } catch (error) {
      if (!isBusyError(error) || performance.now() + pause > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, pause));
    }
  }
}
