// A real service on 127.0.0.1:0 with a temp data dir and the shipped migrations, plus factories for users and tokens.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { type Config, loadConfig } from '../../src/platform/config.ts';
import { databasePath } from '../../src/platform/db/client.ts';
import { createLogger } from '../../src/platform/logger.ts';
import { createService, type Service } from '../../src/app/compose.ts';
import { hashPassword } from '../../src/access/auth/passwords.ts';
import { insertUser, type UserRow } from '../../src/access/users/userRecords.ts';
import type { Role } from '../../src/platform/db/schema/users.ts';
import { migratedTemplate } from './database.ts';
import { patience } from './patience.ts';
import { testEnv } from './testEnv.ts';

export { patience };

export const TEST_PASSWORD = 'correct-horse-42';
let testPasswordHash: Promise<string> | undefined;

export type Response<T = any> = { status: number; headers: Headers; body: T; text: string };

export type RequestOptions = { token?: string; body?: unknown; headers?: Record<string, string>; raw?: string | Buffer };

export type TestUser = { user: UserRow; password: string; accessToken: string; refreshToken: string };

export type TestServer = {
  url: string;
  service: Service;
  dataDir: string;
  /** Every JSON log line the service wrote. */
  logs: string[];
  request<T = any>(method: string, path: string, options?: RequestOptions): Promise<Response<T>>;
  createUser(options?: { role?: Role; username?: string; email?: string; password?: string }): Promise<TestUser>;
  close(): Promise<void>;
};

let counter = 0;

export function tempDir(prefix = 'ems-test-'): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

/** The service's config for a test: `testEnv` (test/helpers/testEnv.ts) read as the service reads its environment. */
export function testConfig(dataDir: string, env: Record<string, string> = {}): Config {
  return loadConfig(testEnv(dataDir, env));
}

/** A stream for the service's logger that keeps every log line it is given in `lines`. */
export function logSink(lines: string[]): Writable {
  return new Writable({
    write(chunk, _encoding, done) {
      lines.push(...String(chunk).split('\n').filter(Boolean));
      done();
    },
  });
}

export async function startTestServer(env: Record<string, string> = {}, options: { collectorNow?: () => number } = {}): Promise<TestServer> {
  const dataDir = env.EMS_DATA_DIR ?? tempDir();
  // A data dir a test prepared keeps its database (one not made yet is left to the service); a new one starts from
  // the migrated template.
  if (fs.existsSync(dataDir) && !fs.existsSync(databasePath(dataDir))) fs.copyFileSync(migratedTemplate(), databasePath(dataDir));
  const config = testConfig(dataDir, env);
  const logs: string[] = [];
  const sink = logSink(logs);
  const service = await createService(config, { logger: createLogger(config.logLevel, sink), collectorNow: options.collectorNow });
  const { url } = await service.listen();

  const request = async <T>(method: string, pathname: string, options: RequestOptions = {}): Promise<Response<T>> => {
    const headers: Record<string, string> = { ...(options.headers ?? {}) };
    if (options.token) headers.authorization = `Bearer ${options.token}`;
    let body: string | Buffer | undefined = options.raw;
    if (options.body !== undefined) {
      body = JSON.stringify(options.body);
      headers['content-type'] ??= 'application/json';
    }
    // @types/node 20 types Buffer over ArrayBufferLike, which its own fetch typings do not accept.
    const response = await fetchRetryingReset(url + pathname, { method, headers, body: body as RequestInit['body'] });
    const text = await response.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      // not JSON: tests read .text
    }
    return { status: response.status, headers: response.headers, body: parsed as T, text };
  };

  const createUser: TestServer['createUser'] = async (options = {}) => {
    counter += 1;
    const username = options.username ?? `user${process.pid}_${counter}`;
    const password = options.password ?? TEST_PASSWORD;
    const passwordHash = options.password ? await hashPassword(password) : await (testPasswordHash ??= hashPassword(TEST_PASSWORD));
    const user = insertUser(service.deps.db, {
      username,
      email: options.email ?? `${username}@example.test`,
      passwordHash,
      role: options.role ?? 'viewer',
    });
    const signed = service.deps.auth.signIn(user);
    return { user, password, accessToken: signed.accessToken, refreshToken: signed.refreshToken };
  };

  return {
    url,
    service,
    dataDir,
    logs,
    request,
    createUser,
    async close() {
      await service.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Methods a server may receive twice with the same effect (RFC 9110 §9.2.2): safe to send again on a reset socket. */
const IDEMPOTENT = new Set(['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE']);

/** True for a fetch that failed because the server closed a pooled keep-alive socket under it (no answer was read). */
export function isResetSocket(error: unknown): boolean {
  const cause = (error as { cause?: { code?: string } } | undefined)?.cause;
  return error instanceof TypeError && ['ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET'].includes(cause?.code ?? '');
}

/**
 * fetch, sent once more when an idempotent request met a socket the server had closed: the service closes a socket
 * idle for 5 s (its keep-alive), and on a busy machine the test process can stay away from its event loop that long
 * between two requests, so the pool hands out a socket the server is closing (ECONNRESET). A retry on a fresh
 * connection is what a browser does for the same case. A POST is never sent twice.
 */
export async function fetchRetryingReset(url: string, init: RequestInit = {}): Promise<globalThis.Response> {
  const retry = IDEMPOTENT.has((init.method ?? 'GET').toUpperCase());
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await fetch(url, init);
    } catch (error) {
      if (!retry || attempt >= 3 || !isResetSocket(error)) throw error;
    }
  }
}

/** Waits `check` out: polls it every 100 ms until it returns a value, for up to `deadlineMs` × patience(). */
export async function eventually<T>(check: () => Promise<T | undefined>, what: string, deadlineMs = 60_000): Promise<T> {
  const until = Date.now() + deadlineMs * patience();
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > until) throw new Error(`gave up waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
