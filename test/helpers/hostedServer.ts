// A real service as main.ts runs it: in its host (src/app/host.ts), which can restart it in place on the same port
// (the guided restore). A temp data dir with the shipped migrations; `service` follows the restarts.
import fs from 'node:fs';
import { hostService, type Host } from '../../src/app/index.ts';
import { hashPassword } from '../../src/access/auth/passwords.ts';
import { insertUser, UserLookup } from '../../src/access/users/userRecords.ts';
import { bindListener } from '../../src/platform/http/listener.ts';
import { createLogger } from '../../src/platform/logger.ts';
import type { Role } from '../../src/platform/roles.ts';
import { logSink, tempDir, TEST_PASSWORD, testConfig } from './server.ts';

export type HostedServer = {
  host: Host;
  url: string;
  dataDir: string;
  logs: string[];
  /** Set when a restart could not start the service again. */
  fatal(): Error | null;
  /** A user with TEST_PASSWORD in the database the service has now. */
  createUser(username: string, role: Role): Promise<void>;
  /** An access token for a user of the database the service has now. */
  tokenFor(username: string): string;
  close(): Promise<void>;
};

export async function startHostedServer(env: Record<string, string> = {}): Promise<HostedServer> {
  const dataDir = tempDir();
  const config = testConfig(dataDir, env);
  const logs: string[] = [];
  let fatal: Error | null = null;
  const host = await hostService(config, { logger: createLogger(config.logLevel, logSink(logs)) }, await bindListener(config), (error) => {
    fatal = error;
  });
  return {
    host,
    url: host.url,
    dataDir,
    logs,
    fatal: () => fatal,
    async createUser(username, role) {
      insertUser(host.service.deps.db, { username, email: `${username}@example.test`, passwordHash: await hashPassword(TEST_PASSWORD), role });
    },
    tokenFor(username) {
      const user = new UserLookup(host.service.deps.db).findByUsername(username);
      if (!user) throw new Error(`no user ${username}`);
      return host.service.deps.auth.signIn(user).accessToken;
    },
    async close() {
      await host.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
