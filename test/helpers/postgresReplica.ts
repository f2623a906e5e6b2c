// Two private PostgreSQL clusters with streaming replication, for the fleet's replica and failover tests: a primary
// (initdb, a `replicator` role with REPLICATION and a password, pg_hba allowing it from 127.0.0.1 only) and a hot
// standby made from it with `pg_basebackup -R` (the primary_conninfo written by -R, a physical replication slot so the
// primary keeps the WAL the standby has not fetched). Both listen on 127.0.0.1 at private free ports, with their
// sockets and data in one private temp dir, torn down (stop + rm) at the end.
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { binDir } from './postgres.ts';

export type ReplicaNode = {
  port: number;
  /** postgresql://postgres@127.0.0.1:<port>/ems_fleet */
  url: string;
  dataDir: string;
  start(): void;
  /** pg_ctl stop -m fast: open connections are cut; the primary sends the standby all its WAL before it stops. */
  stop(): void;
  /** kill -9 of the postmaster (a crash): nothing more is sent to anyone; returns once the process is gone. */
  crash(): Promise<void>;
};

export type ReplicatedPostgres = {
  primary: ReplicaNode;
  standby: ReplicaNode;
  /** pg_ctl promote -w: the standby leaves recovery and takes writes. */
  promote(): void;
  /** Waits until the standby has replayed the primary's WAL up to its current insert LSN (polled, generous limit). */
  waitForReplay(timeoutMs?: number): Promise<void>;
  /**
   * Cuts the standby off the primary's WAL (primary_conninfo emptied and reloaded on the standby), as a network split or
   * a lagging standby would: the primary goes on committing (replication is asynchronous) what the standby never gets.
   * Returns once the primary sees no standby streaming.
   */
  detachStandby(timeoutMs?: number): Promise<void>;
  /** Whether the node at `url` is a standby (pg_is_in_recovery()). */
  inRecovery(url: string): Promise<boolean>;
  destroy(): void;
  dir: string;
};

const asRoot = process.getuid?.() === 0;

function run(bin: string, args: string[]): string {
  const full = path.join(binDir(), bin);
  const [file, argv] = asRoot ? ['runuser', ['-u', 'postgres', '--', full, ...args]] : [full, args];
  const result = spawnSync(file, argv, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  if (result.status !== 0) throw new Error(`${bin} ${args.join(' ')} failed (${result.status}): ${result.stderr}${result.stdout}`);
  return result.stdout;
}

/** A port the kernel just handed out on 127.0.0.1 (closed again: PostgreSQL binds it a moment later). */
async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

async function query<T extends pg.QueryResultRow>(url: string, sql: string, values: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(sql, values)).rows;
  } finally {
    await client.end();
  }
}

/** LSN text (e.g. "0/3000148") as a bigint, for comparing. */
export function lsnValue(lsn: string): bigint {
  const [hi, lo] = lsn.split('/');
  return (BigInt(`0x${hi}`) << 32n) + BigInt(`0x${lo}`);
}

export async function startReplicatedPostgres(): Promise<ReplicatedPostgres> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ems-pgrepl-'));
  if (asRoot) spawnSync('chown', ['postgres:postgres', dir]);
  fs.chmodSync(dir, 0o700);
  const password = randomBytes(12).toString('hex');
  const primaryDir = path.join(dir, 'primary');
  const standbyDir = path.join(dir, 'standby');
  const [primaryPort, standbyPort] = [await freePort(), await freePort()];
  const node = (dataDir: string, port: number, name: string): ReplicaNode => ({
    port,
    url: `postgresql://postgres@127.0.0.1:${port}/ems_fleet`,
    dataDir,
    start: () => run('pg_ctl', ['-D', dataDir, '-l', path.join(dir, `${name}.log`), '-w', '-t', '120', 'start']),
    stop: () => run('pg_ctl', ['-D', dataDir, '-m', 'fast', '-w', '-t', '120', 'stop']),
    crash: async () => {
      const pid = Number(fs.readFileSync(path.join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
      process.kill(pid, 'SIGKILL');
      const deadline = Date.now() + 60_000;
      for (;;) {
        try {
          process.kill(pid, 0);
        } catch {
          return;
        }
        if (Date.now() > deadline) throw new Error(`postmaster ${pid} still runs 60 s after kill -9`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
  });
  const primary = node(primaryDir, primaryPort, 'primary');
  const standby = node(standbyDir, standbyPort, 'standby');

  // Trust for the fleet's own role on loopback (a test cluster); the replication role needs its password.
  run('initdb', ['-D', primaryDir, '-U', 'postgres', '--auth-local=trust', '--auth-host=trust', '--encoding=UTF8', '--locale=C', '--no-sync']);
  const hba = path.join(primaryDir, 'pg_hba.conf');
  fs.writeFileSync(
    hba,
    ['local all postgres trust', 'host replication replicator 127.0.0.1/32 scram-sha-256', 'host all postgres 127.0.0.1/32 trust', ''].join('\n'),
  );
  const settings = (port: number) => [
    `listen_addresses='127.0.0.1'`,
    `port=${port}`,
    `unix_socket_directories='${dir}'`,
    'max_connections=100',
    'shared_buffers=64MB',
    'wal_level=replica',
    'max_wal_senders=5',
    'max_replication_slots=5',
    'hot_standby=on',
    // fsync off keeps initdb and commits fast; replication and promotion behave the same (nothing here is a power cut).
    'fsync=off',
    'synchronous_commit=off',
  ];
  fs.appendFileSync(path.join(primaryDir, 'postgresql.conf'), `\n${settings(primaryPort).join('\n')}\n`);
  primary.start();
  let destroyed = false;
  const destroy = () => {
    if (destroyed) return;
    destroyed = true;
    for (const n of [standby, primary]) {
      try {
        if (fs.existsSync(path.join(n.dataDir, 'postmaster.pid'))) n.stop();
      } catch {
        // already stopped
      }
    }
    fs.rmSync(dir, { recursive: true, force: true });
  };
  process.once('exit', destroy);
  try {
    await query(primary.url.replace('/ems_fleet', '/postgres'), `create role replicator with replication login password '${password}'`);
    await query(primary.url.replace('/ems_fleet', '/postgres'), 'create database ems_fleet');
    await query(primary.url.replace('/ems_fleet', '/postgres'), `select pg_create_physical_replication_slot('standby1')`);
    run('pg_basebackup', [
      '-D',
      standbyDir,
      '-R',
      '-X',
      'stream',
      '-c',
      'fast',
      '-S',
      'standby1',
      '-d',
      `host=127.0.0.1 port=${primaryPort} user=replicator password=${password} application_name=standby1`,
    ]);
    // The copy carries the primary's settings: the standby's own port wins (the later line of postgresql.conf).
    fs.appendFileSync(path.join(standbyDir, 'postgresql.conf'), `\nport=${standbyPort}\n`);
    standby.start();
  } catch (error) {
    destroy();
    throw error;
  }

  const inRecovery = async (url: string) => (await query<{ r: boolean }>(url, 'select pg_is_in_recovery() as r'))[0]!.r;
  const waitForReplay = async (timeoutMs = 120_000) => {
    const target = lsnValue((await query<{ lsn: string }>(primary.url, 'select pg_current_wal_insert_lsn()::text as lsn'))[0]!.lsn);
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const replayed = (await query<{ lsn: string | null }>(standby.url, 'select pg_last_wal_replay_lsn()::text as lsn'))[0]!.lsn;
      if (replayed !== null && lsnValue(replayed) >= target) return;
      if (Date.now() > deadline) throw new Error(`the standby did not replay up to the primary's LSN within ${timeoutMs} ms (replayed ${replayed})`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  };
  const detachStandby = async (timeoutMs = 60_000) => {
    await query(standby.url, "alter system set primary_conninfo = ''");
    await query(standby.url, 'select pg_reload_conf()');
    const deadline = Date.now() + timeoutMs;
    while ((await query(primary.url, 'select 1 from pg_stat_replication')).length > 0) {
      if (Date.now() > deadline) throw new Error(`the standby still streams ${timeoutMs} ms after its primary_conninfo was emptied`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  };
  return {
    primary,
    standby,
    detachStandby,
    promote: () => run('pg_ctl', ['-D', standbyDir, '-w', '-t', '120', 'promote']),
    waitForReplay,
    inRecovery,
    destroy,
    dir,
  };
}
