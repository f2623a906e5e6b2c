// Structure (issue 40, review 1.7 "hand-kept table lists"): every Kept cache declares the tables its value is read from,
// by hand; a table missing there is a stale answer after a write to it. This derives the list: while the service
// answers its cached reads, each statement a Kept's compute() runs is mapped to the tables it opens (EXPLAIN's OpenRead
// root pages, views and indexes resolved to their tables), and a Kept asked inside another's compute() lends the
// outer one its declared tables (the outer value depends on them too). Every table read must be declared, or listed
// below with the reason the cache cannot go stale on it.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import { Kept } from '../../src/platform/db/kept.ts';
import { MIN, misbehavingRig, type MisbehavingRig } from '../helpers/rig.ts';
import { noonZone } from '../helpers/siteClock.ts';

/** Tables a cache reads but need not declare, by `<cache> <table>`, with the reason. */
const UNDECLARED: Record<string, string> = {};

type Frame = { kept: Kept<unknown>; read: Set<string> };
const stack: Frame[] = [];
/** Per cache name: the tables it declared and the tables its computations read. */
const seen = new Map<string, { declared: Set<string>; read: Set<string>; computed: number }>();
/** Per connection and statement text: the tables the statement opens. */
const opened = new WeakMap<Database.Database, Map<string, string[]>>();
let explaining = false;

/** The statement's parameters are bound as the call binds them (better-sqlite3 asks for every one, EXPLAIN too). */
function tablesOf(db: Database.Database, source: string, args: unknown[]): string[] {
  let bySource = opened.get(db);
  if (!bySource) opened.set(db, (bySource = new Map()));
  let tables = bySource.get(source);
  if (tables) return tables;
  explaining = true;
  try {
    const roots = new Map(
      (db.prepare("SELECT rootpage, tbl_name FROM main.sqlite_schema WHERE type IN ('table', 'index') AND rootpage > 0").raw().all() as [number, string][]).map(
        ([root, table]) => [root, table],
      ),
    );
    const ops = db.prepare(`EXPLAIN ${source}`).all(...args) as { opcode: string; p2: number; p3: number }[];
    tables = [...new Set(ops.filter((op) => op.opcode === 'OpenRead' && op.p3 === 0).map((op) => roots.get(op.p2) ?? `rootpage ${op.p2}`))].filter(
      (table) => !table.startsWith('sqlite_'),
    );
  } finally {
    explaining = false;
  }
  bySource.set(source, tables);
  return tables;
}

function install(): () => void {
  const originalGet = Kept.prototype.get;
  Kept.prototype.get = function <V>(this: Kept<V>, key: string, compute: () => V): V {
    // An inner cache's value (hit or not) is part of the outer ones': they depend on its tables.
    for (const frame of stack) for (const table of this.options.tables) frame.read.add(table);
    const entry = seen.get(this.options.name) ?? { declared: new Set(this.options.tables), read: new Set<string>(), computed: 0 };
    seen.set(this.options.name, entry);
    return originalGet.call(this, key, () => {
      const frame: Frame = { kept: this as Kept<unknown>, read: new Set() };
      stack.push(frame);
      try {
        return compute();
      } finally {
        stack.pop();
        entry.computed += 1;
        for (const table of frame.read) entry.read.add(table);
      }
    }) as V;
  };
  const restore: Array<() => void> = [() => (Kept.prototype.get = originalGet)];
  return () => {
    for (const undo of restore) undo();
  };
}

/** Wraps the statement methods that read (on the prototype every better-sqlite3 statement shares). */
function watchStatements(db: Database.Database): () => void {
  const proto = Object.getPrototypeOf(db.prepare('SELECT 1')) as Record<string, (...args: unknown[]) => unknown>;
  const originals = Object.fromEntries(['get', 'all', 'iterate'].map((name) => [name, proto[name]!]));
  for (const [name, original] of Object.entries(originals)) {
    proto[name] = function (this: Database.Statement, ...args: unknown[]) {
      if (stack.length && !explaining) {
        const tables = tablesOf(this.database, this.source, args);
        for (const frame of stack) for (const table of tables) frame.read.add(table);
      }
      return original.apply(this, args);
    };
  }
  return () => Object.assign(proto, originals);
}

const INTERVAL = 15 * MIN;
let r: MisbehavingRig;
let undo: Array<() => void> = [];
before(async () => {
  undo.push(install());
  const start = Math.floor(Date.now() / INTERVAL) * INTERVAL - 2 * 60 * MIN;
  r = await misbehavingRig({ start });
  undo.push(watchStatements(r.server.service.deps.db.sqlite));
  const token = r.admin.accessToken;
  const zoned = await r.server.request('PUT', '/api/configs', { token, body: { timezone: noonZone() } });
  assert.equal(zoned.status, 200, zoned.text);
  await r.meter({ name: 'Main', code: 'meter.main.kwh', kind: 'energy', site: true });
  await r.meter({ name: 'HVAC', code: 'meter.hvac.kwh', kind: 'energy', area: 'HVAC' });
  await r.server.request('PUT', '/api/energy/areas', { token, body: { areas: [{ name: 'Kitchen', todayKwh: 1, monthKwh: 2, yearKwh: 3, powerKw: 1 }] } });
  for (let i = 0; i <= 6; i += 1) {
    if (i) r.clock.now += INTERVAL;
    const hours = (r.clock.now - start) / 3_600_000;
    r.gateway.set('meter.main.kwh', { value: 1000 + 10 * hours });
    r.gateway.set('meter.hvac.kwh', { value: 500 + 4 * hours });
    await r.collector.collect();
  }
  await r.server.request('POST', '/api/alerts', { token, body: { title: 'Boiler', level: 'warning' } });
  await r.server.request('POST', '/api/faults', { token, body: { device: 'pump', severity: 'low' } });
});
after(async () => {
  for (const step of undo.reverse()) step();
  undo = [];
  await r?.close();
});

test('every table a Kept cache reads is in its declared list', async () => {
  const token = r.admin.accessToken;
  const today = new Date().toISOString().slice(0, 10);
  const paths = [
    '/api/energy/areas',
    '/api/overview/stats',
    '/api/overview/energy/weekly',
    '/api/dashboard',
    '/api/wallboard',
    '/api/energy/commodities',
    `/api/energy/summary?from=${today.slice(0, 8)}01&to=2200-01-01`.replace('2200-01-01', today),
    '/api/analysis/compare?period=day',
    '/api/analysis/compare?period=month',
    '/api/alerts',
    '/api/faults',
    '/api/faults/stats',
    '/api/maintenance',
    '/api/users',
    '/api/auth/me',
    '/api/tariffs',
  ];
  const statuses: string[] = [];
  for (const path of paths) statuses.push(`${path} ${(await r.server.request('GET', path, { token })).status}`);
  // A second round answers from the caches; a write between drops some of them.
  await r.server.request('PUT', '/api/energy/areas', { token, body: { areas: [{ name: 'Kitchen', todayKwh: 2, monthKwh: 2, yearKwh: 3, powerKw: 1 }] } });
  for (const path of paths) await r.server.request('GET', path, { token });

  const missing: string[] = [];
  for (const [name, { declared, read }] of seen) {
    if (name.startsWith('selfcheck.')) continue;
    for (const table of read) if (!declared.has(table) && !(`${name} ${table}` in UNDECLARED)) missing.push(`${name} ${table}`);
  }
  const report = [...seen].map(
    ([name, { declared, read, computed }]) => `${name} (${computed}×): declared ${[...declared].join(',')}; read ${[...read].join(',')}`,
  );
  assert.deepEqual(missing, [], `${statuses.join('\n')}\n${report.join('\n')}`);
  // The check saw the caches it is about: the area cards, the figures, the overview, the dashboard, the lists.
  const computed = [...seen].filter(([, entry]) => entry.computed > 0).map(([name]) => name);
  for (const name of ['energy.areaCards', 'energy.figures', 'overview.stats', 'overview.weekly', 'dashboard.public', 'site.settings'])
    assert.ok(computed.includes(name), `${name} computed (${computed.join(', ')})\n${statuses.join('\n')}`);
});

test('the check sees an undeclared table, one read through an inner cache, and a declared one', () => {
  const db = new Database(':memory:');
  try {
    db.exec(
      'CREATE TABLE a (x); CREATE TABLE b (x); CREATE TABLE c (x); CREATE INDEX c_x ON c (x); INSERT INTO a VALUES (1); INSERT INTO b VALUES (2); INSERT INTO c VALUES (3)',
    );
    const inner = new Kept<number>(db, { name: 'selfcheck.inner', tables: ['c'], max: 1 });
    const outer = new Kept<number>(db, { name: 'selfcheck.outer', tables: ['a'], max: 1 });
    const readA = db.prepare('SELECT x FROM a').pluck();
    const readB = db.prepare('SELECT count(*) FROM b WHERE x = ?').pluck();
    const readC = db.prepare('SELECT x FROM c WHERE x = ?').pluck();
    const undo = watchStatements(db);
    try {
      outer.get('k', () => (readA.get() as number) + (readB.get(2) as number) + inner.get('k', () => readC.get(3) as number));
    } finally {
      undo();
    }
    assert.deepEqual([...seen.get('selfcheck.outer')!.read].sort(), ['a', 'b', 'c']);
    assert.deepEqual([...seen.get('selfcheck.inner')!.read], ['c'], 'the index read counts for its table');
  } finally {
    db.close();
  }
});
