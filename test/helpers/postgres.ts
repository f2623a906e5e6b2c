// A private PostgreSQL cluster for one test file or benchmark: initdb in a temp dir, pg_ctl start on a unix socket in
// that dir (no TCP port, so parallel test files never collide), torn down (stop + rm) at the end.
// Debian's `postgresql` package puts the binaries under /usr/lib/postgresql/<major>/bin; initdb refuses to run as
// root, so as root the cluster belongs to the `postgres` user the package creates (runuser), otherwise to the caller.
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export type PostgresCluster = {
  /** A libpq URL for the database `ems_fleet` on the cluster's unix socket. */
  url: string;
  /** A URL for another database on the same cluster (created by createDatabase). */
  urlFor(database: string): string;
  createDatabase(name: string): Promise<string>;
  /** pg_ctl restart -m fast: every open connection is cut, the data stays. */
  restart(): void;
  stop(): void;
  start(): void;
  /** Stops the cluster and removes its directory. */
  destroy(): void;
  dir: string;
};

export function binDir(): string {
  const root = '/usr/lib/postgresql';
  const majors = fs.existsSync(root)
    ? fs
        .readdirSync(root)
        .filter((name) => fs.existsSync(path.join(root, name, 'bin', 'initdb')))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  if (majors.length === 0) throw new Error('PostgreSQL is not installed: apt-get install postgresql (test/setup/systemPackages.sh)');
  if (Number(majors[0]) < 15) throw new Error(`PostgreSQL ${majors[0]} found; the fleet needs 15 or later`);
  return path.join(root, majors[0]!, 'bin');
}

const asRoot = process.getuid?.() === 0;

/** Runs a PostgreSQL binary as the cluster's owner. */
function run(bin: string, args: string[]): void {
  const full = path.join(binDir(), bin);
  const [file, argv] = asRoot ? ['runuser', ['-u', 'postgres', '--', full, ...args]] : [full, args];
  const result = spawnSync(file, argv, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  if (result.status !== 0) throw new Error(`${bin} ${args.join(' ')} failed (${result.status}): ${result.stderr}${result.stdout}`);
}

/**
 * Starts a fresh cluster. `durable: false` (tests) turns fsync and synchronous_commit off, which makes initdb and each
 * commit fast and changes nothing a test can observe short of a power cut; the benchmark passes `durable: true`.
 */
export async function startPostgres(options: { durable?: boolean } = {}): Promise<PostgresCluster> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ems-pg-'));
  const dataDir = path.join(dir, 'data');
  if (asRoot) execFileSync('chown', ['postgres:postgres', dir]);
  fs.chmodSync(dir, 0o700);
  run('initdb', ['-D', dataDir, '-U', 'postgres', '--auth=trust', '--encoding=UTF8', '--locale=C', ...(options.durable ? [] : ['--no-sync'])]);
  const settings = [
    `listen_addresses=''`,
    `unix_socket_directories='${dir}'`,
    'max_connections=100',
    'shared_buffers=64MB',
    ...(options.durable ? [] : ['fsync=off', 'synchronous_commit=off', 'full_page_writes=off']),
  ];
  fs.appendFileSync(path.join(dataDir, 'postgresql.conf'), `\n${settings.join('\n')}\n`);
  const start = () => run('pg_ctl', ['-D', dataDir, '-l', path.join(dir, 'server.log'), '-w', '-t', '60', 'start']);
  const stop = () => run('pg_ctl', ['-D', dataDir, '-m', 'fast', '-w', 'stop']);
  start();
  const urlFor = (database: string) => `postgresql://postgres@localhost/${database}?host=${encodeURIComponent(dir)}`;
  let destroyed = false;
  const destroy = () => {
    if (destroyed) return;
    destroyed = true;
    try {
      stop();
    } catch {
      // already stopped
    }
    fs.rmSync(dir, { recursive: true, force: true });
  };
  process.once('exit', destroy);
  const createDatabase = async (name: string) => {
    run('createdb', ['-h', dir, '-U', 'postgres', name]);
    return urlFor(name);
  };
  await createDatabase('ems_fleet');
  return {
    url: urlFor('ems_fleet'),
    urlFor,
    createDatabase,
    restart: () => run('pg_ctl', ['-D', dataDir, '-l', path.join(dir, 'server.log'), '-m', 'fast', '-w', 'restart']),
    stop,
    start,
    destroy,
    dir,
  };
}
