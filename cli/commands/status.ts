// emsctl status: is the service running (its /api/health answered), what it runs, and how its data, backups, gateway and disk are.
import fs from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import type { Config } from '../../src/platform/config.ts';
import { version } from '../../src/platform/packageRoot.ts';
import { envFileOf, wantsJson, withDb, type GlobalOptions } from '../context.ts';
import { formatBytes as bytes } from '../sizes.ts';
import { localTimeZone, zonedTime } from '../zonedTime.ts';

/** How long the health request may take before the service counts as not answering. */
const HEALTH_TIMEOUT_MS = 3000;

type Health = {
  status: string;
  version: string;
  uptimeSec: number;
  database: string;
  iot?: { gateway: string; checkedAt: string | null; lastError: string | null };
  collector?: { meters: number; lastOkAt: string | null; lagSec: number | null; state?: string; failingSince?: string | null; metersNotOk?: number };
};

/** The last upgrade as the installer recorded it (installer/install.sh, last-upgrade.json in the data dir), or null. */
type LastUpgrade = { result: 'upgraded' | 'rolled-back'; at: string; from: string; to: string; reason: string };
export function readLastUpgrade(dataDir: string): LastUpgrade | null {
  try {
    const parsed = JSON.parse(fs.readFileSync(`${dataDir}/last-upgrade.json`, 'utf8')) as Partial<LastUpgrade>;
    if (parsed.result !== 'upgraded' && parsed.result !== 'rolled-back') return null;
    return {
      result: parsed.result,
      at: String(parsed.at ?? ''),
      from: String(parsed.from ?? ''),
      to: String(parsed.to ?? ''),
      reason: String(parsed.reason ?? ''),
    };
  } catch {
    return null;
  }
}

/** One line for a person: what the last upgrade did, and for a rollback why. */
function describeUpgrade(upgrade: LastUpgrade | null): string {
  if (!upgrade) return 'none recorded';
  if (upgrade.result === 'upgraded') return `${upgrade.at} ${upgrade.from} -> ${upgrade.to}`;
  return `${upgrade.at} ROLLED BACK: ${upgrade.reason}; ${upgrade.from} runs again on its data as it stopped`;
}

/**
 * The service's own health URL from the settings it runs with (the installed emsctl reads the same env file):
 * a wildcard listen address is asked on loopback; HTTPS when a certificate is configured.
 */
export function healthUrl(config: Config): string {
  const host = config.host === '0.0.0.0' || config.host === '' ? '127.0.0.1' : config.host === '::' ? '::1' : config.host;
  const scheme = config.tls ? 'https' : 'http';
  return `${scheme}://${host.includes(':') ? `[${host}]` : host}:${config.port}/api/health`;
}

/**
 * GET the health URL with node:http(s) (cheaper to load than a fetch client: status must answer fast). The box's own
 * certificate may be self-signed and this asks itself over loopback, so it does not verify it.
 */
async function askHealth(url: string): Promise<{ health: Health | null; error: string | null; ms: number }> {
  const started = performance.now();
  const client = url.startsWith('https:') ? await import('node:https') : await import('node:http');
  return new Promise((resolve) => {
    const request = client.get(url, { rejectUnauthorized: false, timeout: HEALTH_TIMEOUT_MS }, (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (text += chunk));
      response.on('error', (error) => resolve({ health: null, error: error.message, ms: 0 }));
      response.on('end', () => {
        let body: (Health & { error?: unknown }) | undefined;
        try {
          body = JSON.parse(text) as Health;
        } catch {
          // not JSON: not an EMS health answer
        }
        if (typeof body?.version !== 'string') {
          // An EMS error body says why (e.g. "This port speaks HTTPS: use https://…").
          const said = typeof body?.error === 'string' ? `: ${body.error}` : ' without an EMS health body';
          // The URL is said once, by the line that shows this ("… http://…/api/health gave HTTP 400: …").
          resolve({ health: null, error: `HTTP ${response.statusCode}${said}`, ms: 0 });
        } else resolve({ health: body, error: null, ms: Math.round(performance.now() - started) });
      });
    });
    request.on('timeout', () => request.destroy(Object.assign(new Error('timeout'), { code: 'ETIMEDOUT' })));
    request.on('error', (error: NodeJS.ErrnoException) => resolve({ health: null, error: error.code ?? error.message, ms: 0 }));
  });
}

/**
 * Asked over http:// while the service speaks HTTPS (its env file sets EMS_TLS_CERT but emsctl did not read it): the
 * service answers "This port speaks HTTPS" (an older one resets the connection). Say what to pass.
 */
export function settingsHint(url: string, error: string | null, envFile: string | null): string {
  if (!url.startsWith('http:') || error === null) return '';
  if (!/speaks HTTPS|ECONNRESET|socket hang up|EPROTO|HPE_/.test(error)) return '';
  return envFile
    ? ` (the service may speak HTTPS: does ${envFile} set EMS_TLS_CERT and EMS_TLS_KEY?)`
    : ' (the service may speak HTTPS: pass --env-file with the settings file it runs with, e.g. --env-file /etc/ems/ems.env)';
}

function fileSize(file: string): number {
  try {
    return fs.statSync(file).size;
  } catch {
    return 0;
  }
}

/**
 * What takes the space in the data dir: each entry at its top (the database with its WAL and shared memory as one,
 * backups/, avatars/, uploads, a stray import or log file, …) with the bytes its files take on disk, largest first. A
 * file hard-linked twice (an upload and its backup) counts once, where it is met first.
 */
export function spaceTakers(dataDir: string, databaseFile: string): { path: string; bytes: number }[] {
  const seen = new Set<string>();
  const onDisk = (file: string): number => {
    let stats: fs.Stats;
    try {
      stats = fs.lstatSync(file);
    } catch {
      return 0;
    }
    const key = `${stats.dev}:${stats.ino}`;
    if (seen.has(key)) return 0;
    seen.add(key);
    if (!stats.isDirectory()) return stats.blocks * 512;
    let total = stats.blocks * 512;
    for (const name of fs.readdirSync(file)) total += onDisk(path.join(file, name));
    return total;
  };
  const database = path.basename(databaseFile);
  const groups = new Map<string, number>();
  let names: string[] = [];
  try {
    names = fs.readdirSync(dataDir).sort();
  } catch {
    return [];
  }
  for (const name of names) {
    const group = name === database || name === `${database}-wal` || name === `${database}-shm` ? `${database} (with -wal, -shm)` : name;
    groups.set(group, (groups.get(group) ?? 0) + onDisk(path.join(dataDir, name)));
  }
  return [...groups].map(([entry, bytes]) => ({ path: entry, bytes })).sort((a, b) => b.bytes - a.bytes);
}

function duration(seconds: number): string {
  const d = Math.floor(seconds / 86400);
  const h = Math.floor((seconds % 86400) / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  return d ? `${d} d ${h} h` : h ? `${h} h ${m} min` : m ? `${m} min` : `${seconds} s`;
}

export function registerStatusCommand(program: Command): void {
  program
    .command('status')
    .description('is the service running, and how are its database, backups, restore drill, gateway and disk; exit 3 when it is not running')
    .action(async (_options, command: Command) => {
      const [
        { describeRetention, listBackups, nextRunOf, presentSchedule, readChecks, readStoredSchedule, runningService },
        { databasePath },
        { settingsAtDefaults },
        { MIN_FREE_BYTES },
      ] = await Promise.all([
        import('../../src/operations/cli.ts'),
        import('../../src/platform/db/client.ts'),
        import('../../src/site/cli.ts'),
        import('../../src/platform/db/storageWatch.ts'),
      ]);
      const { syncState } = await import('../../src/fleetSync/cli.ts');
      const envFile = envFileOf(command.optsWithGlobals() as GlobalOptions);
      await withDb(
        command,
        async (db, config) => {
          const url = healthUrl(config);
          const holder = runningService(config.dataDir);
          const answer = await askHealth(url);
          // Something else may answer on that port: only a live service holding this data dir counts as running.
          const running = Boolean(holder && answer.health);
          const service = {
            state: running ? 'running' : holder ? 'not answering' : 'not running',
            pid: holder?.pid ?? null,
            since: holder?.since ?? null,
            healthUrl: url,
            health: running ? answer.health!.status : null,
            healthError: running
              ? null
              : answer.error
                ? `${answer.error}${settingsHint(url, answer.error, envFile)}`
                : answer.health
                  ? `something else answers at ${url}; no service holds ${config.dataDir}`
                  : null,
            version: running ? answer.health!.version : null,
            uptimeSec: running ? answer.health!.uptimeSec : null,
          };

          const file = databasePath(config.dataDir);
          const stored = readStoredSchedule(db);
          const checks = readChecks(config.dataDir);
          const schedule = presentSchedule(stored, checks, config.backupTarget, stored.enabled ? nextRunOf(stored.cron) : null);
          const backups = listBackups(config.dataDir);
          const disk = fs.statfsSync(config.dataDir);
          const count = (sql: string) => db.sqlite.prepare(sql).pluck().get() as number;
          const { confirmed, ...siteRow } = db.sqlite
            .prepare('SELECT site_name AS siteName, timezone, currency, confirmed_fields AS confirmed FROM platform_config WHERE id = 1')
            .get() as { siteName: string; timezone: string; currency: string; confirmed: string };
          const site = { ...siteRow, defaults: settingsAtDefaults(JSON.parse(confirmed) as string[]) };

          const status = {
            service,
            // Kept at the top level as before: scripts read these.
            version,
            dataDir: config.dataDir,
            // Where the port, host and TLS settings came from besides the environment (null: the environment alone).
            envFile,
            // The file and its write-ahead log together (what the data takes on disk now); the WAL part on its own, since
            // it grows and shrinks between checkpoints and so moves the total from one call to the next.
            // The name, time zone and currency, and which still hold the values a new box starts with.
            site,
            databaseBytes: fileSize(file) + fileSize(`${file}-wal`),
            databaseWalBytes: fileSize(`${file}-wal`),
            backup: {
              enabled: schedule.enabled,
              cron: schedule.cron,
              retention: schedule.retention,
              nextRunAt: schedule.nextRunAt,
              // The cron and the next run are in the box's time zone.
              timeZone: localTimeZone(),
              lastRunAt: schedule.lastRunAt,
              lastStatus: schedule.lastStatus,
              newest: backups[0] ? { name: backups[0].name, createdAt: backups[0].createdAt, sizeBytes: backups[0].sizeBytes } : null,
              kept: backups.length,
              target: schedule.target,
            },
            drill: schedule.drill,
            gateway:
              running && answer.health!.iot
                ? { state: answer.health!.iot.gateway, checkedAt: answer.health!.iot.checkedAt, lastError: answer.health!.iot.lastError }
                : null,
            collector: running && answer.health!.collector ? answer.health!.collector : null,
            // Read from the database (not the health answer): the sync state is there whether or not the service runs.
            fleet: syncState(db),
            // What takes the space in the data dir, largest first (a full disk's first question).
            disk: { freeBytes: disk.bavail * disk.bsize, totalBytes: disk.blocks * disk.bsize, dataDirTakenBy: spaceTakers(config.dataDir, file) },
            users: count('SELECT count(*) FROM users'),
            admins: count("SELECT count(*) FROM users WHERE role = 'admin'"),
            activeRefreshTokens: count(`SELECT count(*) FROM refresh_tokens WHERE expires_at > ${Date.now()}`),
            signingSecret: config.jwtSecret ? 'pinned by EMS_JWT_SECRET' : 'stored in the database',
            migrations: count('SELECT count(*) FROM __drizzle_migrations'),
            // Written by the installer: an upgrade that did not come up healthy was rolled back by itself.
            lastUpgrade: readLastUpgrade(config.dataDir),
          };

          if (wantsJson(command)) {
            process.stdout.write(`${JSON.stringify(status, null, 2)}\n`);
          } else {
            const { backup, drill, gateway } = status;
            const lines: Array<[string, string]> = [
              [
                'service',
                service.state === 'running'
                  ? `running (pid ${service.pid}, ${service.health}, ${url.replace(/\/api\/health$/, '')})`
                  : service.state === 'not answering'
                    ? `NOT ANSWERING: pid ${service.pid} holds the data dir but ${url} gave ${service.healthError}`
                    : `NOT RUNNING (${url}: ${service.healthError ?? 'no answer'})`,
              ],
              ['version', service.version && service.version !== version ? `${service.version} running, ${version} installed (restart to switch)` : version],
              ['last upgrade', describeUpgrade(status.lastUpgrade)],
              ['uptime', service.uptimeSec === null ? '-' : duration(service.uptimeSec)],
              ['data dir', config.dataDir],
              ['settings', envFile ? `${envFile} (and the environment)` : 'the environment (no env file: --env-file)'],
              [
                'site',
                `"${site.siteName}", ${site.timezone}, ${site.currency}${
                  site.defaults.length ? `: STILL THE DEFAULTS (${site.defaults.join(', ')}): emsctl site set --name … --timezone … --currency …` : ''
                }`,
              ],
              [
                'database',
                `${bytes(status.databaseBytes)} (${status.databaseBytes.toLocaleString('en')} bytes; write-ahead log ${bytes(status.databaseWalBytes)})`,
              ],
              [
                'last backup',
                backup.lastRunAt
                  ? `${backup.lastRunAt} ${backup.lastStatus}${backup.newest ? ` (newest: ${backup.newest.name}, ${bytes(backup.newest.sizeBytes)})` : ''}`
                  : 'never',
              ],
              [
                'schedule',
                backup.enabled
                  ? `"${backup.cron}" (${backup.timeZone}), next ${backup.nextRunAt ? zonedTime(backup.nextRunAt) : '-'}; keeps ${describeRetention(backup.retention)} (${backup.kept} now)`
                  : 'OFF (emsctl backup schedule set --enable)',
              ],
              [
                'backup target',
                !backup.target
                  ? 'none (EMS_BACKUP_TARGET not set: backups stay on this disk)'
                  : `${backup.target.dir}: ${backup.target.status === 'never' ? 'no copy yet' : `${backup.target.status.toUpperCase()} at ${backup.target.at}${backup.target.error ? `: ${backup.target.error}` : ''}`}`,
              ],
              [
                'restore drill',
                drill
                  ? `${drill.at} ${drill.status.toUpperCase()} (${drill.backup ?? '-'}${drill.status === 'ok' ? `, ${drill.tables} tables, ${drill.rows} rows, ${drill.files} files, ${drill.durationMs} ms` : `: ${drill.error}`})`
                  : 'never (runs weekly after a scheduled backup, or: emsctl backup drill)',
              ],
              [
                'gateway',
                gateway
                  ? `${gateway.state === 'degraded' ? 'DEGRADED (answers, but the meter collection fails)' : gateway.state}${gateway.checkedAt ? ` (checked ${gateway.checkedAt})` : ''}${gateway.lastError ? `: ${gateway.lastError}` : ''}`
                  : 'unknown (the service is not running)',
              ],
              [
                'collector',
                status.collector
                  ? `${status.collector.meters} meters, ${status.collector.lagSec === null ? 'no good collection yet' : `last good ${status.collector.lagSec} s ago`}${
                      status.collector.state === 'failing' ? `; FAILING since ${status.collector.failingSince ?? '-'}` : ''
                    }${status.collector.metersNotOk ? `; ${status.collector.metersNotOk} meters not ok (GET /api/energy/collector)` : ''}`
                  : '-',
              ],
              [
                'fleet sync',
                status.fleet.state === 'off'
                  ? 'off (not joined)'
                  : `${status.fleet.state.toUpperCase()} to ${status.fleet.fleetUrl}; ${status.fleet.unsentRows} rows unsent; last stored ${status.fleet.lastSuccessAt ?? 'never'}${
                      status.fleet.lastError ? `; ${status.fleet.lastError}` : ''
                    }`,
              ],
              [
                'free disk',
                `${bytes(status.disk.freeBytes)} of ${bytes(status.disk.totalBytes)} (${Math.round((100 * status.disk.freeBytes) / Math.max(1, status.disk.totalBytes))}%)${
                  status.disk.freeBytes < MIN_FREE_BYTES ? ': FULL (writes are refused with 507; free space, e.g. what is listed below)' : ''
                }`,
              ],
              [
                'taken by',
                status.disk.dataDirTakenBy
                  .slice(0, 5)
                  .map((entry) => `${entry.path} ${bytes(entry.bytes)}`)
                  .join(', ') || '-',
              ],
              ['users', `${status.users} (${status.admins} admins), ${status.activeRefreshTokens} active sessions`],
              ['signing secret', status.signingSecret],
              ['migrations', String(status.migrations)],
            ];
            process.stdout.write(`${lines.map(([key, value]) => `${key.padEnd(14)} ${value}`).join('\n')}\n`);
          }
          // As systemctl status: 3 when the service is not running, so scripts and monitoring can use the exit code.
          if (!running) process.exitCode = 3;
          // No quick_check: it reads every page of the file (seconds on a year of data) and status reads a few rows;
          // `emsctl db check` and every other command still check.
        },
        { quickCheck: false },
      );
    });
}
