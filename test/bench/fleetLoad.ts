// Load benchmark of the fleet service (issue 43): the fleet as its own process (src/fleet/main.ts over HTTPS, PostgreSQL
// beside it with fsync on), and simulated sites speaking the real sync protocol, each with its own enrolled credential.
// Live sites send over one kept connection each, as a box does (issue 55: the box's undici Agent kept 10 minutes, the
// fleet's idle timeout 6 minutes); enrolment, catch-up and the portfolio's pages use a fresh TLS connection per request.
// What the sites send is built by the site box's own code (src/fleetSync/batch.ts: historyBatch, newestDayBatch, heldPart
// and the SentIntervals trimming, the same calls FleetSync makes) from a real site SQLite with SITE_METERS meters; every
// simulated site replays that sequence with its own credential and send time.
//
// 1. Live: LIVE_SITES sites × 200 meters per arm at the box's cadence since issue 44: the collector writes its meter days
//    hourly, every 5-minute sync (EMS_FLEET_SYNC_INTERVAL) may carry what it holds (`held`, built by heldPart from held
//    records whose open interval grows between syncs; BENCH_STILL of the meters, 0.2 by default, use nothing), the sync
//    after a write its rows first. Box modes: `every` sends every held day row at every sync (the box before issue 55),
//    `changed` only those whose figures differ from what the fleet holds (issue 55, round 3), `held15` those at most
//    every 15 minutes (HELD_EVERY_MS: the box now). An arm is `code:mode` (BENCH_ARMS), `code` being `now` (this
//    checkout's fleet) or `base` (the fleet in BENCH_BASELINE_DIR, e.g. `git archive <commit> | tar -x -C dir` with
//    node_modules linked); every arm has its own fleet process and PostgreSQL cluster, and all arms run at the same time
//    (the same load), each measured apart. Time-compressed COMPRESS×: LIVE_MINUTES simulated minutes are sent in
//    LIVE_MINUTES/COMPRESS wall minutes. An arm's CPU (its fleet process, and its PostgreSQL cluster's processes with the
//    exited backends' CPU that the postmaster collected, from /proc/<pid>/stat) over the window is divided by the
//    simulated duration: the share of a core the real cadence costs; CPU per sync × 5,000 sites ÷ 300 s is the
//    5,000-site figure (linear in sites), against the 25 % target. Baseline: each arm idle for a quarter of the
//    window's wall time.
// 2. Catch-up: CATCHUP_SITES sites come back after a 7-day outage: the newest day first, then a random delay
//    (0..CATCHUP_DELAY), then the history oldest-first in bounded batches (150 meter days), waiting for the next 30 s tick
//    after a 429 as FleetSync does; meanwhile LIVE_SITES - CATCHUP_SITES sites stay live in real time (no compression).
//    Prints the catch-up time (target 15 min for 100 sites) and the live sites' sync lag (from a sync's start to the
//    fleet's acknowledgement of its last batch) p50/p99/max against 2 minutes.
// 3. Portfolio (run between 1 and 2): the health list, the EUI ranking and the alert list at BENCH_PORTFOLIO_SITES
//    sites (5,000: the enrolled ones and the rest made in PostgreSQL), page 1 (and the health list's last page) asked
//    100 times each over fresh TLS connections: p50/p99 against the 200 ms target, with GET /api/fleet/me as baseline.
// Default: a scaled catch-up (20 sites, delay scaled to 60 s); BENCH_FULL=1 runs 100 sites with the real 5-minute delay.
// Prints figures; asserts nothing. Env: BENCH_LIVE_SITES, BENCH_LIVE_MINUTES, BENCH_COMPRESS, BENCH_CATCHUP_SITES,
// BENCH_SKIP_LIVE, BENCH_SKIP_CATCHUP, BENCH_ARMS, BENCH_BASELINE_DIR, BENCH_STILL, BENCH_PORTFOLIO_SITES, BENCH_SKIP_PORTFOLIO.
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import readline from 'node:readline';
import pg from 'pg';
import { Agent, request as undiciRequest } from 'undici';
import { addUser, createEnrolmentCode } from '../../src/fleet/enrolment.ts';
import { refreshAllSiteEui } from '../../src/fleet/portfolio.ts';
import { refreshHealthFacts } from '../../src/fleet/portfolioKept.ts';
import {
  ALERTS_PER_BATCH,
  DAYS_PER_BATCH,
  heldPart,
  historyBatch,
  metadata,
  newestDayBatch,
  SentIntervals,
  type SiteBatch,
} from '../../src/fleetSync/batch.ts';
import { BOX_KEEP_ALIVE_MS, HELD_EVERY_MS } from '../../src/fleetSync/sync.ts';
import type { HeldDay } from '../../src/metering/index.ts';
import { encodeFlags, encodeValues, KWH_SCALE } from '../../src/metering/intervalCodec.ts';
import { closeDatabase, type Db, openDatabase } from '../../src/platform/db/client.ts';
import { selfSignedCertificate } from '../helpers/certificate.ts';
import { startFleetDatabaseWith } from '../helpers/fleet.ts';
import type { PostgresCluster } from '../helpers/postgres.ts';

const FULL = process.env.BENCH_FULL === '1';
/** The portfolio pages are read at this many sites (the enrolled ones and the rest made in PostgreSQL). */
const PORTFOLIO_SITES = Number(process.env.BENCH_PORTFOLIO_SITES ?? 5000);
const PAGE_REQUESTS = 100;
const LIVE_SITES = Number(process.env.BENCH_LIVE_SITES ?? 500);
const SITE_METERS = 200;
const LIVE_MINUTES = Number(process.env.BENCH_LIVE_MINUTES ?? 45);
const COMPRESS = Number(process.env.BENCH_COMPRESS ?? 15);
const CATCHUP_SITES = Number(process.env.BENCH_CATCHUP_SITES ?? (FULL ? 100 : 20));
const CATCHUP_DELAY_MS = FULL ? 300_000 : Math.round((300_000 * CATCHUP_SITES) / 100);
const OUTAGE_DAYS = 7;
const SYNC_MS = 5 * 60_000;
const TICK_MS = 30_000;
const INTERVAL_MS = 15 * 60_000;
const CLK_TCK = 100;
const HEALTH = { version: 'bench', collector: 'ok', gateway: 'ok', lastBackupAt: null, unsentRows: 0 };

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'ems-bench-fleetload-'));
const cluster = await startFleetDatabaseWith({ durable: true });
const tls = selfSignedCertificate(work, 'fleet');
const ca = fs.readFileSync(tls.certFile);

// --- the fleet, its own process ---------------------------------------------------------------------------------------
/** A fleet process (the code in `codeDir`: this checkout, or BENCH_BASELINE_DIR's) on its own PostgreSQL cluster. */
type FleetProcess = { process: ChildProcess; host: string; port: number; postmaster: number; pool: pg.Pool; origin: string };
async function startFleetProcess(codeDir: string, fleetCluster: PostgresCluster): Promise<FleetProcess> {
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', 'src/fleet/main.ts'], {
    cwd: codeDir,
    env: {
      ...process.env,
      EMS_FLEET_DATABASE_URL: fleetCluster.url,
      EMS_FLEET_PORT: '0',
      EMS_FLEET_TLS_CERT: tls.certFile,
      EMS_FLEET_TLS_KEY: tls.keyFile,
      EMS_LOG_LEVEL: 'info',
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  // The fleet goes with this process, however it ends.
  process.once('exit', () => child.kill('SIGKILL'));
  const url = await new Promise<string>((resolve, reject) => {
    const lines = readline.createInterface({ input: child.stdout! });
    lines.on('line', (line) => {
      try {
        const entry = JSON.parse(line) as { msg?: string; url?: string };
        if (entry.msg === 'EMS fleet started' && entry.url) resolve(entry.url);
      } catch {
        // not a log line
      }
    });
    child.once('exit', (code) => reject(new Error(`the fleet exited (${code})`)));
  });
  const { hostname, port: p } = new URL(url);
  const postmaster = Number(fs.readFileSync(path.join(fleetCluster.dir, 'data', 'postmaster.pid'), 'utf8').split('\n')[0]);
  return {
    process: child,
    host: hostname,
    port: Number(p),
    postmaster,
    pool: new pg.Pool({ connectionString: fleetCluster.url, max: 2 }),
    origin: `https://${hostname}:${p}`,
  };
}
const mainFleet = await startFleetProcess(process.cwd(), cluster);
const fleetProcess = mainFleet.process;

/** CPU seconds (user + system) of one process, and of its exited children when asked. */
function cpuOf(pid: number, withExitedChildren = false): number {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // fields[0] is the state (stat field 3): utime is field 14, stime 15, cutime 16, cstime 17.
  const ticks = Number(fields[11]) + Number(fields[12]) + (withExitedChildren ? Number(fields[13]) + Number(fields[14]) : 0);
  return ticks / CLK_TCK;
}
/** A PostgreSQL cluster: the postmaster, its live children (backends, writer, WAL), and the exited ones. */
function postgresCpu(postmaster: number): number {
  let total = cpuOf(postmaster, true);
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === postmaster) total += cpuOf(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return total;
}
const cpuOfFleet = (f: FleetProcess) => ({ fleet: cpuOf(f.process.pid!), postgres: postgresCpu(f.postmaster) });
const cpu = () => cpuOfFleet(mainFleet);
const sql = mainFleet.pool;

// --- HTTPS: the live sites on kept connections, the rest a fresh connection per request ----------------------------
type Answer = { status: number; retryAfter: number; text: string };
/**
 * A live site's one kept connection, as the box sends (fleetDispatcher, src/fleetSync/sync.ts: one undici Agent, one
 * connection kept BOX_KEEP_ALIVE_MS), trusting the bench's CA as a box trusts its fleet's (NODE_EXTRA_CA_CERTS).
 */
const keptConnection = () => new Agent({ keepAliveTimeout: BOX_KEEP_ALIVE_MS, keepAliveMaxTimeout: BOX_KEEP_ALIVE_MS, connections: 1, connect: { ca } });
async function postKept(target: FleetProcess, agent: Agent, pathname: string, body: string, credential: string): Promise<Answer> {
  const response = await undiciRequest(`${target.origin}${pathname}`, {
    method: 'POST',
    dispatcher: agent,
    headers: { 'content-type': 'application/json', authorization: `Bearer ${credential}` },
    body,
  });
  const text = await response.body.text();
  return { status: response.statusCode, retryAfter: Number(response.headers['retry-after'] ?? 0), text };
}
function post(pathname: string, body: string, credential?: string, target: FleetProcess = mainFleet): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const request = https.request(
      {
        host: target.host,
        port: target.port,
        path: pathname,
        method: 'POST',
        ca,
        agent: false,
        headers: {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
          ...(credential ? { authorization: `Bearer ${credential}` } : {}),
        },
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () =>
          resolve({
            status: response.statusCode ?? 0,
            retryAfter: Number(response.headers['retry-after'] ?? 0),
            text: Buffer.concat(chunks).toString('utf8'),
          }),
        );
      },
    );
    request.on('error', reject);
    request.end(body);
  });
}

/** A GET as a fleet user (a fresh connection, as a browser tab after a while); the time to the whole answer. */
function get(pathname: string, token: string, target: FleetProcess = mainFleet): Promise<{ status: number; ms: number; bytes: number }> {
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    const request = https.request(
      { host: target.host, port: target.port, path: pathname, method: 'GET', ca, agent: false, headers: { authorization: `Bearer ${token}` } },
      (response) => {
        let bytes = 0;
        response.on('data', (chunk: Buffer) => (bytes += chunk.length));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, ms: performance.now() - t0, bytes }));
      },
    );
    request.on('error', reject);
    request.end();
  });
}

/** A site: its credential, the fleet it sends to, and (a live site) its kept connection. */
type Site = { siteId: string; credential: string; fleet: FleetProcess; agent?: Agent };
async function enrol(name: string, target: FleetProcess = mainFleet, kept = false): Promise<Site> {
  const { code } = await createEnrolmentCode(target.pool, name);
  const response = await post('/api/fleet/enrol', JSON.stringify({ code }), undefined, target);
  if (response.status !== 201) throw new Error(`enrolment: ${response.status} ${response.text}`);
  return { ...(JSON.parse(response.text) as { siteId: string; credential: string }), fleet: target, ...(kept ? { agent: keptConnection() } : {}) };
}
const send = (site: Site, body: string) =>
  site.agent ? postKept(site.fleet, site.agent, '/api/fleet/ingest', body, site.credential) : post('/api/fleet/ingest', body, site.credential, site.fleet);

// --- the site template: a real site SQLite and the batches the site's code builds from it --------------------------
const SENT_AT = '"__SENT_AT__"';
/** A batch as the site sends it, its send time left to fill in at the moment it goes. */
type Wire = { json: string; intervals: number; days: number; held: number };
function wire(batch: SiteBatch, withMeta?: Pick<SiteBatch, 'site' | 'areas' | 'meters'>): Wire {
  const json = JSON.stringify({ ...batch, sentAt: '__SENT_AT__', ...(withMeta ?? {}), health: HEALTH });
  return { json, intervals: batch.intervals.length, days: batch.days.length, held: (batch.held?.intervals.length ?? 0) + (batch.held?.days.length ?? 0) };
}
const withSentAt = (w: Wire) => w.json.replace(SENT_AT, JSON.stringify(new Date().toISOString()));

function siteDb(name: string): Db {
  const db = openDatabase(path.join(work, `${name}.db`));
  const insert = db.sqlite.prepare(
    "INSERT INTO meters (name, code, kind, site, commodity, created_at, updated_at) VALUES (?, ?, 'energy', ?, ?, '2026-01-01', '2026-01-01')",
  );
  db.sqlite.transaction(() => {
    for (let m = 1; m <= SITE_METERS; m++) insert.run(`Meter ${m}`, `m${m}`, m <= 2 ? 1 : 0, m === 2 ? 'gas' : 'electricity');
  })();
  return db;
}

const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const STILL = Number(process.env.BENCH_STILL ?? 0.2);
/** The last STILL of the meters use nothing. */
const value = (meter: number, interval: number) =>
  meter > SITE_METERS * (1 - STILL) ? 0 : Math.round((0.5 + ((meter * 7 + interval) % 13) / 10) * 1000) / 1000;
/**
 * The box's 15-minute write: every meter's day row with its intervals through the one ending at `boundary`, measured
 * from `from` on (earlier intervals of the day missing: the live sites' meters start at the window's first boundary).
 */
function writeBoundary(db: Db, boundary: number, from = 0): void {
  const start = boundary - INTERVAL_MS;
  const day = dayOf(start);
  const dayStart = Date.parse(`${day}T00:00:00Z`);
  const last = (start - dayStart) / INTERVAL_MS;
  const upsert = db.sqlite.prepare(
    `INSERT INTO meter_days (meter_id, day, kwh, flags, total_kwh, cost, carbon_kg) VALUES (?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (day, meter_id) DO UPDATE SET kwh = excluded.kwh, flags = excluded.flags, total_kwh = excluded.total_kwh,
       cost = excluded.cost, carbon_kg = excluded.carbon_kg`,
  );
  const flags = encodeFlags(new Uint8Array(96));
  db.sqlite.transaction(() => {
    for (let m = 1; m <= SITE_METERS; m++) {
      const values = new Float64Array(96).fill(Number.NaN);
      let total = 0;
      for (let i = Math.max(0, Math.ceil((from - dayStart) / INTERVAL_MS)); i <= last; i++) {
        values[i] = value(m, i);
        total += values[i]!;
      }
      upsert.run(m, day, encodeValues(values, KWH_SCALE), flags, total, total * 0.3, total * 0.2);
    }
  })();
}

/** One tick's batches as FleetSync sends them: history batches until one comes back empty (the first always goes). */
function syncBatches(db: Db, state: { cursor: number }, sent: SentIntervals, meta?: Pick<SiteBatch, 'site' | 'areas' | 'meters'>): Wire[] {
  const out: Wire[] = [];
  for (let n = 0; ; n++) {
    const batch = historyBatch(db, state.cursor, new Date(), { days: DAYS_PER_BATCH, alerts: ALERTS_PER_BATCH }, sent);
    if (n > 0 && batch.through === state.cursor) {
      sent.discard();
      return out;
    }
    out.push(wire(batch, n === 0 ? meta : undefined));
    sent.commit();
    if (batch.through === state.cursor) return out;
    state.cursor = batch.through;
  }
}

const percentile = (sorted: number[], q: number) => (sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));

// The live template, as a box runs since issue 44: the collector writes every meter's day row hourly, and every 5-minute
// sync carries what it holds (`held`: FleetSync's heldPart on the held records), the sync after an hour's write its
// rows first. From T0 (an hour boundary 3 h ago, the warm-up's write; the meters measure from an hour before it) the
// template's sync j goes at T0 + 30 min + j × 5 min + 150 s (the open interval a sixth, a half or five sixths gone). STILL of the meters use nothing
// (water, gas off season, idle plant): their values stay 0. Two modes, each on its own sites:
//   every   – the box before this change (issue 55 item 1): every held day row at every sync (its intervals trimmed);
//   changed – the box now: a held day row only when its figures differ from what the fleet holds.
const HOUR_MS = 60 * 60_000;
const SYNC_PHASE_MS = 150_000;
/** The measured window opens half an hour after the write at T0, so a 60-minute window holds one hourly write. */
const WINDOW_START_MS = 30 * 60_000;
const T0 = Math.floor(Date.now() / HOUR_MS) * HOUR_MS - 3 * HOUR_MS;
const LIVE_SYNCS = Math.ceil((LIVE_MINUTES * 60_000) / SYNC_MS);
/** Template syncs beyond the measured window (the catch-up's live sites go on with them): an hour more. */
const TEMPLATE_SYNCS = LIVE_SYNCS + 12;
type Mode = 'every' | 'changed' | 'held15';
const isMode = (m: string): m is Mode => m === 'every' || m === 'changed' || m === 'held15';
/**
 * The live arms, each `code:mode` on its own fleet process and PostgreSQL cluster, run at the same time (the same load)
 * and measured apart: `now` is this checkout's fleet, `base` the one in BENCH_BASELINE_DIR (the code before, e.g.
 * `git archive <commit> | tar -x -C dir` with node_modules linked). Default: the fleet and box before this change against
 * both now, or (no baseline) the box before (`changed`) and now (`held15`) on this fleet.
 */
const BASELINE_DIR = process.env.BENCH_BASELINE_DIR;
const ARM_SPECS = (process.env.BENCH_ARMS ?? (BASELINE_DIR ? 'base:changed,now:held15' : 'now:changed,now:held15')).split(',').map((spec) => {
  const [code, mode] = spec.split(':') as [string, string];
  if ((code !== 'now' && code !== 'base') || !isMode(mode)) throw new Error(`BENCH_ARMS: ${spec} is not now|base:every|changed|held15`);
  if (code === 'base' && !BASELINE_DIR) throw new Error('BENCH_ARMS names base: set BENCH_BASELINE_DIR');
  return { code, mode, name: spec };
});
const LIVE = process.env.BENCH_SKIP_LIVE !== '1';
const CATCHUP = process.env.BENCH_SKIP_CATCHUP !== '1';
const MODES = [...new Set([...(LIVE ? ARM_SPECS.map((a) => a.mode) : []), ...(CATCHUP ? (['held15'] as const) : [])])];

/** The box before issue 55: every held day row goes, whatever the fleet holds of it (its intervals still trimmed). */
class EveryDayRow extends SentIntervals {
  override get(meter: string, day: string): ReturnType<SentIntervals['get']> {
    const content = super.get(meter, day);
    return content && { values: content.values, qualities: content.qualities };
  }
}

/** The collector's held records at `at`: every meter's day so far (from `from`), the open interval partly counted. */
function heldAt(at: number, from: number): HeldDay[] {
  const day = dayOf(at);
  const dayStart = Date.parse(`${day}T00:00:00Z`);
  const open = Math.floor((at - dayStart) / INTERVAL_MS);
  const fraction = (at - dayStart - open * INTERVAL_MS) / INTERVAL_MS;
  const first = Math.max(0, Math.ceil((from - dayStart) / INTERVAL_MS));
  const days: HeldDay[] = [];
  for (let m = 1; m <= SITE_METERS; m++) {
    const kwh = new Float64Array(96).fill(Number.NaN);
    let total = 0;
    for (let i = first; i <= open; i++) {
      kwh[i] = i === open ? value(m, i) * fraction : value(m, i);
      total += kwh[i]!;
    }
    const record = { meterId: m, day, start: dayStart, kwh, flags: new Uint8Array(96), maxKw: null };
    days.push({ meterId: m, day, totalKwh: total, cost: total * 0.3, carbonKg: total * 0.2, peakKw: null, peakIndex: null, stored: null, record });
  }
  return days;
}

type Template = { warmup: Wire[]; syncs: Wire[][]; finalCursor: number };
function liveTemplate(mode: Mode): Template {
  const db = siteDb(`live-${mode}`);
  const meta = metadata(db);
  const state = { cursor: 0 };
  const sent = mode === 'every' ? new EveryDayRow() : new SentIntervals();
  const from = T0 - HOUR_MS;
  writeBoundary(db, T0, from);
  const warmup = syncBatches(db, state, sent, meta);
  // The send before the window (not measured): what is held half an hour after the write at T0.
  const pre = heldPart(db, heldAt(T0 + WINDOW_START_MS - SYNC_MS + SYNC_PHASE_MS, from), sent);
  if (pre) {
    warmup.push(wire({ sentAt: '', after: state.cursor, through: state.cursor, intervals: [], days: [], alerts: [], held: pre }));
    sent.commit();
  } else sent.discard();
  const syncs: Wire[][] = [];
  let lastLooked: number | undefined = T0 + WINDOW_START_MS - SYNC_MS + SYNC_PHASE_MS;
  for (let j = 0; j < TEMPLATE_SYNCS; j++) {
    const at = T0 + WINDOW_START_MS + j * SYNC_MS + SYNC_PHASE_MS;
    const wires: Wire[] = [];
    const hour = Math.floor(at / HOUR_MS) * HOUR_MS;
    // The hour's write (the collector writes at the hour; this sync is the first after it): its rows go first.
    if (hour > at - SYNC_MS) {
      writeBoundary(db, hour, from);
      wires.push(...syncBatches(db, state, sent));
    }
    // held15 (the box now): what is held goes at most every HELD_EVERY_MS, as FleetSync.heldDue decides.
    const heldDue = mode !== 'held15' || lastLooked === undefined || at - lastLooked >= HELD_EVERY_MS - 30_000;
    if (heldDue) lastLooked = at;
    const part = heldDue ? heldPart(db, heldAt(at, from), sent) : null;
    if (part) {
      wires.push(wire({ sentAt: '', after: state.cursor, through: state.cursor, intervals: [], days: [], alerts: [], held: part }));
      sent.commit();
    } else {
      sent.discard();
      if (wires.length === 0) wires.push(heartbeat(state.cursor));
    }
    syncs.push(wires);
  }
  closeDatabase(db);
  return { warmup, syncs, finalCursor: state.cursor };
}
const heartbeat = (cursor: number): Wire => wire({ sentAt: '', after: cursor, through: cursor, intervals: [], days: [], alerts: [] });
const templates = new Map(MODES.map((mode) => [mode, liveTemplate(mode)]));
const rowsOf = (wires: Wire[]) => wires.reduce((sum, w) => sum + w.intervals + w.days + w.held, 0);
/** The batches a live site sends at its sync number `k` (at phase + k × 5 min): past the template, heartbeats. */
function liveSync(mode: Mode, k: number): Wire[] {
  const template = templates.get(mode)!;
  return template.syncs[k] ?? [heartbeat(template.finalCursor)];
}

type LiveSite = Site & { phase: number };
/** `count` live sites of `mode` on `target`, each on its kept connection, warmed up (the template's first syncs). */
async function liveSitesOn(target: FleetProcess, mode: Mode, count: number, label: string): Promise<LiveSite[]> {
  const sites: LiveSite[] = [];
  for (let i = 0; i < count; i++) sites.push({ ...(await enrol(`Live ${label} ${i}`, target, true)), phase: Math.floor(Math.random() * SYNC_MS) });
  for (const site of sites) {
    for (const w of templates.get(mode)!.warmup) {
      const r = await send(site, withSentAt(w));
      if (r.status !== 200) throw new Error(`warm-up: ${r.status} ${r.text}`);
    }
  }
  return sites;
}
type Arm = { name: string; mode: Mode; fleet: FleetProcess; cluster: PostgresCluster; sites: LiveSite[] };
const arms: Arm[] = [];
if (LIVE) {
  console.error(`live: ${ARM_SPECS.length} arms × ${LIVE_SITES} sites (${ARM_SPECS.map((a) => a.name).join(', ')})…`);
  for (const spec of ARM_SPECS) {
    const armCluster = await startFleetDatabaseWith({ durable: true });
    const fleet = await startFleetProcess(spec.code === 'base' ? BASELINE_DIR! : process.cwd(), armCluster);
    arms.push({ name: spec.name, mode: spec.mode, fleet, cluster: armCluster, sites: await liveSitesOn(fleet, spec.mode, LIVE_SITES, spec.name) });
  }
}

async function sendAll(site: Site, batches: Wire[], onWait?: () => number): Promise<{ retries: number }> {
  let retries = 0;
  for (const w of batches) {
    for (;;) {
      const r = await send(site, withSentAt(w));
      if (r.status === 200) break;
      if (r.status !== 429 && r.status !== 503) throw new Error(`ingest ${r.status} ${r.text}`);
      retries++;
      // FleetSync: notBefore = now + Retry-After, and the next look comes at the next tick.
      await sleep(onWait ? onWait() : Math.max(r.retryAfter * 1000, TICK_MS));
    }
  }
  return { retries };
}

const results: Record<string, unknown> = {};

// --- 1. live traffic, compressed, every arm at the same time on its own fleet and PostgreSQL ------------------------
if (LIVE) {
  const idleWallMs = (LIVE_MINUTES * 60_000) / COMPRESS / 4;
  const idle0 = arms.map((arm) => cpuOfFleet(arm.fleet));
  await sleep(idleWallMs);
  const idleSec = idleWallMs / 1000;
  results.live = {
    baselineIdleShareOfACore: Object.fromEntries(
      arms.map((arm, i) => {
        const c = cpuOfFleet(arm.fleet);
        return [arm.name, { fleet: +((c.fleet - idle0[i]!.fleet) / idleSec).toFixed(4), postgres: +((c.postgres - idle0[i]!.postgres) / idleSec).toFixed(4) }];
      }),
    ),
  };
  const simMs = LIVE_SYNCS * SYNC_MS;
  const windowMs = simMs / COMPRESS;
  const measured = arms.map((arm) => ({ arm, rows: 0, heldRows: 0, requests: 0, retries: 0, latest: 0, latencies: [] as number[], syncs: 0 }));
  const c0 = arms.map((arm) => cpuOfFleet(arm.fleet));
  const started = performance.now();
  // One loop per site, its syncs one after another (FleetSync never overlaps two ticks): the template's syncs
  // 0 .. LIVE_SYNCS-1, each site at its own phase.
  await Promise.all(
    measured.flatMap((m) =>
      m.arm.sites.map(async (site) => {
        for (let k = 0; k < LIVE_SYNCS; k++) {
          const late = performance.now() - started - (site.phase + k * SYNC_MS) / COMPRESS;
          if (late < 0) await sleep(-late);
          else m.latest = Math.max(m.latest, late);
          const batches = liveSync(m.arm.mode, k);
          m.rows += rowsOf(batches);
          for (const w of batches) m.heldRows += w.held;
          m.requests += batches.length;
          m.syncs++;
          const t0 = performance.now();
          m.retries += (await sendAll(site, batches, () => TICK_MS / COMPRESS)).retries;
          m.latencies.push(performance.now() - t0);
        }
      }),
    ),
  );
  await sleep(windowMs - (performance.now() - started));
  const wallSec = (performance.now() - started) / 1000;
  const c1 = arms.map((arm) => cpuOfFleet(arm.fleet));
  const simSec = simMs / 1000;
  for (const [i, m] of measured.entries()) {
    const fleetSec = c1[i]!.fleet - c0[i]!.fleet;
    const pgSec = c1[i]!.postgres - c0[i]!.postgres;
    const msPerSync = { fleet: (fleetSec * 1000) / m.syncs, postgres: (pgSec * 1000) / m.syncs };
    const perSync = msPerSync.fleet + msPerSync.postgres;
    m.latencies.sort((x, y) => x - y);
    (results.live as Record<string, unknown>)[m.arm.name] = {
      sites: m.arm.sites.length,
      metersPerSite: SITE_METERS,
      stillMeters: STILL,
      connections: 'one kept connection per site (undici Agent as the box: keep-alive 10 min, 1 connection)',
      compression: `${(simSec / 60).toFixed(0)} simulated minutes of traffic sent in ${wallSec.toFixed(0)} s wall (${COMPRESS}×), every arm at once; CPU seconds ÷ simulated seconds = share of a core at the real cadence`,
      syncs: m.syncs,
      requests: m.requests,
      rowsSent: m.rows,
      rowsPerSync: Math.round(m.rows / m.syncs),
      heldRowsPerSync: Math.round(m.heldRows / m.syncs),
      turnedAway429: m.retries,
      syncMs: { p50: Math.round(percentile(m.latencies, 0.5)), p99: Math.round(percentile(m.latencies, 0.99)), max: Math.round(m.latencies.at(-1) ?? 0) },
      syncStartedLateMsMax: Math.round(m.latest),
      loadAverage1m: +os.loadavg()[0]!.toFixed(1),
      cpuSeconds: { fleet: +fleetSec.toFixed(2), postgres: +pgSec.toFixed(2) },
      shareOfACore: { fleet: +(fleetSec / simSec).toFixed(4), postgres: +(pgSec / simSec).toFixed(4), both: +((fleetSec + pgSec) / simSec).toFixed(4) },
      cpuMsPerSync: { fleet: +msPerSync.fleet.toFixed(2), postgres: +msPerSync.postgres.toFixed(2), both: +perSync.toFixed(2) },
      // Linear in sites (each site's sync costs the same whatever the others do, measured here at `sites`): 5,000 sites
      // sync 5,000 ÷ 300 s = 16.7 times a second.
      at5000Sites: {
        shareOfACore: +((perSync * 5000) / (SYNC_MS / 1000) / 1000).toFixed(3),
        target: 0.25,
        method: `cpuMsPerSync measured at ${m.arm.sites.length} sites × 5,000 sites ÷ 300 s (one sync per site every 5 minutes), idle baseline not subtracted`,
      },
      sitesWithinAQuarterOfACore: Math.floor((0.25 * 1000 * (SYNC_MS / 1000)) / perSync),
    };
    console.log(JSON.stringify({ live: { [m.arm.name]: (results.live as Record<string, unknown>)[m.arm.name] } }));
  }
  if (arms.length >= 2) {
    const [before, ...others] = arms.map((arm) => (results.live as Record<string, { cpuMsPerSync: { both: number }; rowsPerSync: number }>)[arm.name]!);
    const ratios = Object.fromEntries(
      others.map((now, i) => [
        `${arms[i + 1]!.name} vs ${arms[0]!.name}`,
        { cpuPerSync: +(now.cpuMsPerSync.both / before!.cpuMsPerSync.both).toFixed(2), rowsPerSync: +(now.rowsPerSync / before!.rowsPerSync).toFixed(2) },
      ]),
    );
    console.log(JSON.stringify({ live: { ratios } }));
  }
  for (const arm of arms) {
    for (const site of arm.sites) await site.agent?.close();
    await arm.fleet.pool.end();
    arm.fleet.process.kill('SIGTERM');
    await new Promise((resolve) => arm.fleet.process.once('exit', resolve));
    arm.cluster.destroy();
  }
}

// --- 3. the portfolio's pages at PORTFOLIO_SITES sites ------------------------------------------------------------
// The enrolled sites and, up to PORTFOLIO_SITES, sites made in PostgreSQL with what the pages read: health facts, two
// commodities × 25 months of monthly totals (the EUI), yesterday's interval count, 40 alerts each (a quarter open).
// Each page (page 1, 100 rows; the alert list 50) asked PAGE_REQUESTS times in turn over fresh TLS connections.
if (process.env.BENCH_SKIP_PORTFOLIO !== '1') {
  const have = Number((await sql.query('select count(*) as n from sites')).rows[0].n);
  const madeStarted = performance.now();
  await sql.query(
    `insert into sites (name, credential_hash, floor_area_m2, last_contact_at, latest_interval_at, clock_skew_ms, health, meter_count)
     select 'Portfolio ' || g, md5(random()::text) || g, 1000 + g, now(), now() - interval '3 minutes', 0,
       jsonb_build_object('version', 'bench', 'unsentRows', 0, 'lastBackupAt', now() - interval '5 hours'), 200
     from generate_series(1, $1::int) g`,
    [Math.max(0, PORTFOLIO_SITES - have)],
  );
  await sql.query(
    `insert into site_months (site_id, commodity, month, value, cost, carbon_kg, days)
     select s.id, c, (date_trunc('month', now()) - m * interval '1 month')::date, 50000 + random() * 20000, 1, 1, 30
     from sites s, unnest(array['electricity', 'gas']) c, generate_series(1, 25) m where s.name like 'Portfolio %'`,
  );
  await sql.query(
    `insert into site_day_counts (site_id, day, rows) select s.id, current_date - 1, 200 * 96 - (random() * 2000)::int from sites s
     where s.name like 'Portfolio %'`,
  );
  await sql.query(
    `insert into site_alerts (site_id, alert_id, title, level, status, occurred_at, seq)
     select s.id, a, 'Alert ' || a, 'warning', case when a % 4 = 0 then 'active' else 'resolved' end, now() - a * interval '1 hour', 1
     from sites s, generate_series(1, 40) a where s.name like 'Portfolio %'`,
  );
  // What the ingest keeps on each site's row for the health grade (fleet migration 0006), for the sites made here.
  await refreshHealthFacts(sql, Date.now());
  await sql.query('analyze');
  const madeSec = (performance.now() - madeStarted) / 1000;
  const { token } = await addUser(sql, `bench-${Date.now()}`, 'admin');
  // With BENCH_BASELINE_DIR, the fleet before (its code on this same database) answers each page too, its requests
  // taking turns with this checkout's, so both meet the same load: `before` beside each figure.
  const baseFleet = BASELINE_DIR ? await startFleetProcess(BASELINE_DIR, cluster) : null;
  const figures = (times: number[], bytes: number) => {
    times.sort((a, b) => a - b);
    return { p50: Math.round(percentile(times, 0.5)), p99: Math.round(percentile(times, 0.99)), max: Math.round(times.at(-1)!), bytes };
  };
  const timed = async (pathname: string) => {
    const times: number[] = [];
    const before: number[] = [];
    let bytes = 0;
    for (let i = 0; i < PAGE_REQUESTS; i++) {
      if (baseFleet) {
        const b = await get(pathname, token, baseFleet);
        if (b.status !== 200) throw new Error(`${pathname} (before): ${b.status}`);
        before.push(b.ms);
      }
      const r = await get(pathname, token);
      if (r.status !== 200) throw new Error(`${pathname}: ${r.status}`);
      times.push(r.ms);
      bytes = r.bytes;
    }
    return { ...figures(times, bytes), ...(baseFleet ? { before: figures(before, bytes) } : {}) };
  };
  const baseline = await timed('/api/fleet/me');
  // The EUI before the sites' sums are kept (every site from its monthly totals: what a page costs in the minutes after
  // the month turns, before each site's next batch), then kept as the ingest keeps them (site_eui).
  const euiFromMonths = await timed('/api/fleet/eui?page=1&pageSize=100');
  const refreshStarted = performance.now();
  const refreshed = await refreshAllSiteEui(sql, Date.now());
  const refreshMs = Math.round(performance.now() - refreshStarted);
  await sql.query('analyze site_eui');
  const pages = {
    health: await timed('/api/fleet/sites?page=1&pageSize=100'),
    healthLastPage: await timed(`/api/fleet/sites?page=${Math.ceil(PORTFOLIO_SITES / 100)}&pageSize=100`),
    // Every EUI page is ranked in SQL at its request (no cache since issue 55, round 4): each of the 100 is uncached.
    euiUncached: await timed('/api/fleet/eui?page=1&pageSize=100'),
    euiUncachedLastPage: await timed(`/api/fleet/eui?page=${Math.ceil(PORTFOLIO_SITES / 100)}&pageSize=100`),
    alerts: await timed('/api/fleet/alerts?page=1&pageSize=50'),
  };
  results.portfolio = {
    sites: Number((await sql.query('select count(*) as n from sites')).rows[0].n),
    madeInPostgresSec: +madeSec.toFixed(1),
    openAlerts: Number((await sql.query("select count(*) as n from site_alerts where status <> 'resolved'")).rows[0].n),
    requestsEach: PAGE_REQUESTS,
    baselineMe: baseline,
    euiFromMonthlyTotals: euiFromMonths,
    euiSumsKept: { sites: refreshed, ms: refreshMs },
    pages,
    targetP99Ms: 200,
    p99RatioToTarget: Object.fromEntries(Object.entries(pages).map(([name, t]) => [name, +(t.p99 / 200).toFixed(2)])),
    p50RatioToBaseline: Object.fromEntries(Object.entries(pages).map(([name, t]) => [name, +(t.p50 / Math.max(1, baseline.p50)).toFixed(1)])),
    loadAverage1m: +os.loadavg()[0]!.toFixed(1),
    grows:
      'health: one scan of the sites rows (the grade from the row alone since fleet migration 0006, no join) and a top-N sort; EUI: an index range scan of page × pageSize entries of sites_eui_rank plus a count of the visible sites (the sums of another month: every site ranked from site_eui); alerts: at most page × pageSize rows of two time indexes plus one count of the open alerts',
  };
  console.log(JSON.stringify({ portfolio: results.portfolio }));
  if (baseFleet) {
    baseFleet.process.kill('SIGTERM');
    await baseFleet.pool.end();
  }
}

// --- 2. catch-up after a 7-day outage, the other sites live --------------------------------------------------------
if (CATCHUP) {
  const now = Date.now();
  const lastBoundary = Math.floor(now / INTERVAL_MS) * INTERVAL_MS;
  const today = dayOf(lastBoundary - INTERVAL_MS);
  const catchDb = siteDb('catchup');
  const catchMeta = metadata(catchDb);
  // Before the outage: the site sent its metadata and everything up to the outage (here: nothing of the 7 days).
  const metaOnly = wire({ sentAt: '', after: 0, through: 0, intervals: [], days: [], alerts: [] }, catchMeta);
  // The 7 days (complete) and today so far, written oldest-first as the box wrote them.
  for (let d = OUTAGE_DAYS; d >= 1; d--) {
    const day = Date.parse(`${today}T00:00:00Z`) - d * 86_400_000;
    writeBoundary(catchDb, day + 86_400_000);
  }
  writeBoundary(catchDb, lastBoundary);
  const sent = new SentIntervals();
  const ahead = newestDayBatch(catchDb, 0, today, new Date(), sent);
  sent.commit();
  const newest = wire(ahead);
  const history = syncBatches(catchDb, { cursor: 0 }, sent);
  closeDatabase(catchDb);
  const perSiteRows = [newest, ...history].reduce((sum, w) => sum + w.intervals + w.days, 0);

  const catchSites: Site[] = [];
  for (let i = 0; i < CATCHUP_SITES; i++) catchSites.push(await enrol(`Catch-up ${i}`));
  for (const site of catchSites) {
    const r = await send(site, withSentAt(metaOnly));
    if (r.status !== 200) throw new Error(`metadata: ${r.status} ${r.text}`);
  }
  const liveMode: Mode = 'held15';
  const live = await liveSitesOn(mainFleet, liveMode, Math.max(0, LIVE_SITES - CATCHUP_SITES), 'catch-up time');
  const lags: number[] = [];
  let liveRetries = 0;
  let catchRetries = 0;
  let stop = false;
  const c0 = cpu();
  const started = performance.now();
  // The live sites go on in real time from where the live part left them (their next syncs).
  const firstK = LIVE_SYNCS;
  const liveLoops = live.map(async (site) => {
    const phase = Math.random() * SYNC_MS;
    for (let k = firstK; !stop; k++) {
      const due = phase + (k - firstK) * SYNC_MS;
      await sleep(due - (performance.now() - started));
      if (stop) return;
      const t0 = performance.now();
      liveRetries += (await sendAll(site, liveSync(liveMode, k))).retries;
      lags.push(performance.now() - t0);
    }
  });
  const catchTimes: number[] = [];
  await Promise.all(
    catchSites.map(async (site) => {
      // Each site's 30 s tick has its own phase; the fleet came back at `started`.
      const tickPhase = Math.random() * TICK_MS;
      const nextTick = () => {
        const t = performance.now() - started;
        return tickPhase + Math.ceil((t - tickPhase) / TICK_MS) * TICK_MS - t;
      };
      await sleep(nextTick());
      catchRetries += (await sendAll(site, [newest], nextTick)).retries;
      await sleep(Math.random() * CATCHUP_DELAY_MS);
      await sleep(nextTick());
      catchRetries += (await sendAll(site, history, nextTick)).retries;
      catchTimes.push(performance.now() - started);
    }),
  );
  const catchUpSec = (performance.now() - started) / 1000;
  const c1 = cpu();
  stop = true;
  await Promise.race([Promise.all(liveLoops), sleep(1000)]);
  lags.sort((a, b) => a - b);
  catchTimes.sort((a, b) => a - b);
  const totalRows = perSiteRows * CATCHUP_SITES;
  const rowsPerSec = totalRows / catchUpSec;
  const projected100 = 300 + (perSiteRows * 100) / rowsPerSec;
  results.catchUp = {
    sites: CATCHUP_SITES,
    liveSitesMeanwhile: live.length,
    metersPerSite: SITE_METERS,
    outageDays: OUTAGE_DAYS,
    batchesPerSite: 1 + history.length,
    rowsPerSite: perSiteRows,
    randomDelayUpToSec: CATCHUP_DELAY_MS / 1000,
    catchUpSec: +catchUpSec.toFixed(1),
    sitesDoneAtSec: { p50: +(percentile(catchTimes, 0.5) / 1000).toFixed(1), max: +(catchTimes.at(-1)! / 1000).toFixed(1) },
    rowsPerSec: Math.round(rowsPerSec),
    turnedAway429: { catchUp: catchRetries, live: liveRetries },
    liveSyncs: lags.length,
    liveLagMs: { p50: Math.round(percentile(lags, 0.5)), p99: Math.round(percentile(lags, 0.99)), max: Math.round(lags.at(-1) ?? 0) },
    targets: { catchUpSecFor100Sites: 900, liveLagMs: 120_000 },
    cpuShareOfACore: { fleet: +((c1.fleet - c0.fleet) / catchUpSec).toFixed(3), postgres: +((c1.postgres - c0.postgres) / catchUpSec).toFixed(3) },
    // What the rows cost in CPU, whatever else the box was doing: the catch-up time an otherwise idle 2-core box would
    // need is about max(fleet, postgres) CPU seconds (each on its own core) plus the random delay.
    cpuSecondsPerMillionRows: {
      fleet: +(((c1.fleet - c0.fleet) * 1e6) / totalRows).toFixed(1),
      postgres: +(((c1.postgres - c0.postgres) * 1e6) / totalRows).toFixed(1),
    },
    cpuBoundSecFor100Sites: Math.round(300 + (Math.max(c1.fleet - c0.fleet, c1.postgres - c0.postgres) / totalRows) * perSiteRows * 100),
    loadAverage1m: +os.loadavg()[0]!.toFixed(1),
    projectedSecFor100Sites: FULL ? undefined : Math.round(projected100),
    grows:
      'catch-up time ≈ random delay (5 min) + sites × rowsPerSite ÷ rowsPerSec (linear in sites once the ingest slots are busy); live lag grows with the 429s, each costing a 30 s tick',
  };
  console.log(JSON.stringify({ catchUp: results.catchUp }));
}

await sql.end();
fleetProcess.kill('SIGTERM');
await new Promise((resolve) => fleetProcess.once('exit', resolve));
cluster.destroy();
fs.rmSync(work, { recursive: true, force: true });
process.exit(0); // the live sites' timers are still pending
