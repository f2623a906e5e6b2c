// The service in its process, restartable without leaving it: the guided restore (issue 53) asks for a restart, the
// host answers 503 on the same port meanwhile, closes the service (the port stays bound), and creates it again; the
// new start applies the restore before it opens the database. The same in development, tests and under systemd (no
// exit, no RestartSec wait, no supervisor needed). Decision: docs/staff-app.md "Restore a backup".
import type http from 'node:http';
import type { Config } from '../platform/config.ts';
import type { Listener } from '../platform/http/listener.ts';
import type { Logger } from '../platform/logger.ts';
import { createService, type Service } from './compose.ts';

type CreateOptions = Omit<NonNullable<Parameters<typeof createService>[1]>, 'restart'> & { logger: Logger };

export type Host = {
  /** The service serving now (a new one after each restart). */
  readonly service: Service;
  readonly url: string;
  /** How many restarts have completed. */
  readonly restarts: number;
  /** Resolves when the restart under way (if any) is done. */
  settled(): Promise<void>;
  close(): Promise<void>;
};

const restoring: http.RequestListener = (_req, res) => {
  res.writeHead(503, { 'content-type': 'application/json; charset=utf-8', 'retry-after': '1' });
  res.end(JSON.stringify({ error: 'The service is restarting to restore a backup; try again in a moment', code: 'UNAVAILABLE', restoring: true }));
};

/**
 * Creates the service on `listener` and restarts it in place when asked. A restart whose new start fails is fatal
 * (onFatal: main.ts exits 1, and systemd starts it again; the restore itself puts the data dir back when it fails).
 */
export async function hostService(config: Config, options: CreateOptions, listener: Listener, onFatal: (error: Error) => void): Promise<Host> {
  let service: Service;
  let restarts = 0;
  let underway: Promise<void> | null = null;
  let closing = false;
  const restart = () => {
    if (underway || closing) return;
    underway = (async () => {
      options.logger.warn('restarting the service in place (guided restore)');
      listener.attach(restoring);
      await service.close({ keepListener: true });
      service = await createService(config, { ...options, restart });
      await service.listen(listener);
      restarts += 1;
      options.logger.info({ restarts }, 'service restarted');
    })()
      .catch((error: Error) => {
        options.logger.fatal({ err: error }, 'the service could not start again after a restart');
        onFatal(error);
      })
      .finally(() => {
        underway = null;
      });
  };
  service = await createService(config, { ...options, restart });
  const { url } = await service.listen(listener);
  return {
    get service() {
      return service;
    },
    url,
    get restarts() {
      return restarts;
    },
    settled: async () => {
      await underway;
    },
    async close() {
      closing = true;
      await underway;
      await service.close();
    },
  };
}
