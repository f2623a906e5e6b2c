// What fault detection costs (issue 54), in process, on the simulator's plant copied to N air handlers (each with its
// eleven points, read from the plant with a per-unit offset so no two are alike):
//   1. one collection's evaluation of every AHU rule on every unit (the detector's step: runners, modes, windows, the
//      episode writes), against the baseline every collection pays anyway: parsing the gateway's values answer for the
//      same codes; and the share of one core at the collect interval (60 s);
//   2. a month's replay of one rule over the N units through FaultDetector.replay (history read in the gateway's
//      500-sample slices from a port answering from the plant), against the baseline of reading that history alone;
//   3. the heap the runners hold after a day of collections (windows are bounded by the longest window a rule reads).
// Run: npm run bench:fdd   (BENCH_EQUIPMENT scales it, default 200)
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { AlertService, FaultService } from '../../src/facility/index.ts';
import { FaultDetector } from '../../src/faultDetection/detector.ts';
import { Episodes } from '../../src/faultDetection/episodes.ts';
import { PointModel } from '../../src/faultDetection/pointModel.ts';
import { RuleBook } from '../../src/faultDetection/ruleBook.ts';
import { suggest } from '../../src/faultDetection/brick.ts';
import { GatewayClient } from '../../src/gateway/client.ts';
import { gatewayPort, type GatewayPort } from '../../src/gateway/port.ts';
import { Climate } from '../../src/gateway/simulator/climate.ts';
import { Plant, PLANT_POINTS } from '../../src/gateway/simulator/plant.ts';
import { AuditLog } from '../../src/platform/db/auditTrail.ts';
import { closeDatabase, databasePath, openDatabase } from '../../src/platform/db/client.ts';
import { createLogger } from '../../src/platform/logger.ts';

const UNITS = Number(process.env.BENCH_EQUIPMENT ?? 200);
const COLLECT_MS = 60_000;
const START = Date.UTC(2026, 0, 12, 8);
const fmt = (value: number, digits = 2) => value.toFixed(digits);
const cpuSeconds = (since: NodeJS.CpuUsage) => {
  const used = process.cpuUsage(since);
  return (used.user + used.system) / 1e6;
};

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ems-bench-fdd-'));
const db = openDatabase(databasePath(dataDir));
const audit = new AuditLog(db);
const plant = new Plant(new Climate(), []);
const ahuPoints = PLANT_POINTS.filter((point) => point.code.startsWith('ahu1.'));

/** Unit n's code for the plant's code: ahu1.sat → ahu7.sat. */
const codeOf = (n: number, code: string) => code.replace(/^ahu1\./, `ahu${n}.`);
/** The plant's AHU values per 5-minute slot, computed once: the bench measures EMS, not the simulated plant. */
const slots = new Map<number, Map<string, number>>();
function plantValue(code: string, at: number): number {
  const slot = Math.floor(at / 300_000);
  let values = slots.get(slot);
  if (!values) slots.set(slot, (values = new Map(ahuPoints.map((point) => [point.code, plant.value(point.code, slot * 300_000)]))));
  return values.get(code)!;
}
/** The plant's value for a unit's code, offset by a tenth of a kelvin per unit (temperatures only). */
function read(code: string, at: number): number {
  const dot = code.indexOf('.');
  const n = Number(code.slice(3, dot));
  const base = `ahu1${code.slice(dot)}`;
  const value = plantValue(base, at);
  return base === 'ahu1.oat' || base === 'ahu1.rat' || base === 'ahu1.mat' || base === 'ahu1.sat' ? value + (n % 10) / 10 : value;
}

const port: GatewayPort = {
  async values(codes) {
    const at = now;
    return codes.map((code) => ({ code, at, good: true, value: read(code, at) }));
  },
  async history(code, from, to) {
    const step = Math.max(5 * 60_000, Math.ceil((to - from) / 500 / 60_000) * 60_000);
    const rows = [];
    for (let t = Math.ceil(from / step) * step; t <= to; t += step) rows.push({ at: t, value: read(code, t) });
    return rows;
  },
  async codes() {
    return null;
  },
  async set() {
    return { status: 200, success: true };
  },
  async alarms() {
    return { rows: [], total: 0 };
  },
};

let now = START;
const pointModel = new PointModel(db);
const rows = ['code,equipment,equipmentType,brickClass,unit'];
for (let n = 1; n <= UNITS; n++)
  for (const point of ahuPoints) {
    const s = suggest(point);
    rows.push([codeOf(n, point.code), `AHU-${n}`, 'AHU', s.brickClass, point.unit].join(','));
  }
const imported = pointModel.importCsv(rows.join('\n'));
if (imported.refused.length) throw new Error(JSON.stringify(imported.refused.slice(0, 3)));
const ruleBook = new RuleBook(db);
ruleBook.ensureLibrary();
const episodes = new Episodes(db, new FaultService(db, audit), audit);
const detector = new FaultDetector({
  model: pointModel,
  book: ruleBook,
  episodes,
  alerts: new AlertService(db, audit),
  port,
  price: () => ({ price: 0.25, currency: 'EUR' }),
  timezone: () => 'UTC',
  intervalMs: COLLECT_MS,
  floodPerHour: 20,
  logger: createLogger('error'),
  now: () => now,
});

// 1. One collection's evaluation, after a warm-up hour.
const codes = [...new Set(pointModel.list().map((row) => row.code))];
for (let i = 0; i < 60; i++) {
  now += COLLECT_MS;
  await detector.evaluate();
}
const COLLECTIONS = 120;
let evaluateMs = 0;
let parseMs = 0;
const evaluationCpu = process.cpuUsage();
for (let i = 0; i < COLLECTIONS; i++) {
  now += COLLECT_MS;
  const answer = JSON.stringify({ data: codes.map((code) => ({ code, value: read(code, now), quality: 'good', ts: new Date(now).toISOString() })) });
  const started = performance.now();
  JSON.parse(answer);
  parseMs += performance.now() - started;
  const before = detector.stats.seconds;
  await detector.evaluate();
  // The detector times its own step (gateway read excluded); the port here answers in-process.
  evaluateMs += (detector.stats.seconds - before) * 1000;
}
const evaluationCpuMs = cpuSeconds(evaluationCpu) * 1000;
const runners = detector.stats.runners;
const perCollection = evaluateMs / COLLECTIONS;
const perParse = parseMs / COLLECTIONS;
console.log(
  `fault detection bench: ${UNITS} air handlers × ${ahuPoints.length} points = ${codes.length} codes, ${runners} rule runners (Node ${process.version})`,
);
console.log(
  `evaluation per collection: ${fmt(perCollection)} ms (baseline, parsing the values answer of the same codes: ${fmt(perParse)} ms; ratio ${fmt(perCollection / perParse, 1)}×); ` +
    `${fmt((perCollection / COLLECT_MS) * 100, 3)} % of one core at a ${COLLECT_MS / 1000} s collect interval ` +
    `(process CPU over the ${COLLECTIONS} collections, the in-process port's reads and the parse included: ${fmt(evaluationCpuMs / COLLECTIONS)} ms each)`,
);

// 3. Memory: a day of collections more, heap before and after (forced GC when --expose-gc).
const gc = (globalThis as { gc?: () => void }).gc;
gc?.();
const heapBefore = process.memoryUsage().heapUsed;
for (let i = 0; i < 24 * 60; i++) {
  now += COLLECT_MS;
  await detector.evaluate();
}
gc?.();
const heapAfter = process.memoryUsage().heapUsed;
console.log(
  `heap after a further day of collections: ${fmt((heapAfter - heapBefore) / 1024 / 1024, 1)} MiB change${gc ? '' : ' (no --expose-gc: not forced)'}`,
);

// 2. A month's replay of one rule over every unit, against reading that history alone.
const rule = ruleBook.get('ahu-heating-coil-leak');
const from = Date.UTC(2026, 0, 1);
const to = Date.UTC(2026, 1, 1);
let cpu = process.cpuUsage();
let started = performance.now();
const replay = await detector.replay(rule, { from, to });
const replayMs = performance.now() - started;
const replayCpu = cpuSeconds(cpu);
cpu = process.cpuUsage();
started = performance.now();
const history = (detector as unknown as { history(code: string, from: number, to: number, step: number): Promise<unknown> }).history.bind(detector);
for (const code of new Set(
  pointModel
    .equipment()
    .flatMap((unit) =>
      ['Supply_Air_Temperature_Sensor', 'Mixed_Air_Temperature_Sensor', 'Heating_Valve', 'Cooling_Valve', 'Supply_Fan_Status'].map((c) => unit.points.get(c)!),
    ),
))
  await history(code, from, to, 5 * 60_000);
const readMs = performance.now() - started;
const readCpu = cpuSeconds(cpu);
// Wall and CPU both: on a shared machine the wall time also holds other processes' turns.
console.log(
  `replay of ${rule.id} over ${UNITS} units × January (5-minute steps): ${fmt(replayMs / 1000, 2)} s wall, ${fmt(replayCpu, 2)} s CPU, ${replay.episodes.length} episodes ` +
    `(baseline, reading the same history alone: ${fmt(readMs / 1000, 2)} s wall, ${fmt(readCpu, 2)} s CPU; ratio ${fmt(replayCpu / readCpu, 1)}× in CPU)`,
);

// 4. The same replay over loopback HTTP, as EMS meets the gateway: the gateway client and port against a server in a
// worker thread answering the month's stored history: plain answers of at most 500 samples with a time each (a gateway
// that ignores codes/history's optional step; the baseline), against answers on the grid when the step is asked, with
// 1, 2 and 4 reads in flight; process CPU counts the worker's too.
const series = new Map<string, number[]>();
for (const point of ahuPoints) {
  const values: number[] = [];
  for (let t = from; t <= to; t += 300_000) values.push(plantValue(point.code, t));
  series.set(point.code, values);
}
const gatewayWorker = new Worker(
  `
  const http = require('node:http');
  const { parentPort, workerData } = require('node:worker_threads');
  const { from, series } = workerData;
  const temperatures = new Set(['ahu1.oat', 'ahu1.rat', 'ahu1.mat', 'ahu1.sat']);
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const { code, start, end, step } = JSON.parse(body);
      const dot = code.indexOf('.');
      const n = Number(code.slice(3, dot));
      const base = 'ahu1' + code.slice(dot);
      const values = series[base];
      const offset = temperatures.has(base) ? (n % 10) / 10 : 0;
      const a = Date.parse(start), b = Date.parse(end);
      res.setHeader('content-type', 'application/json');
      if (step === 300) {
        // codes/history's optional step (DESIGN.md): the values on the grid, no time per sample.
        const first = Math.ceil((a - from) / 300000) * 300000 + from;
        const out = [];
        for (let t = first; t <= b; t += 300000) {
          const v = values[(t - from) / 300000];
          out.push(v === undefined ? null : v + offset);
        }
        return res.end(JSON.stringify({ start: new Date(first).toISOString(), step, values: out }));
      }
      const data = [];
      for (let t = Math.ceil((a - from) / 300000) * 300000 + from; t <= b && data.length < 500; t += 300000) {
        const v = values[(t - from) / 300000];
        if (v !== undefined) data.push({ ts: new Date(t).toISOString(), value: v + offset });
      }
      res.end(JSON.stringify({ data }));
    });
  });
  // The client keeps idle connections 30 s: the server must not close one first (a reused socket would be reset).
  server.keepAliveTimeout = 120000;
  server.listen(0, '127.0.0.1', () => parentPort.postMessage(server.address().port));
  parentPort.on('message', () => server.close(() => process.exit(0)));
  `,
  { eval: true, workerData: { from, series: Object.fromEntries(series) } },
);
const gatewayPortNumber = await new Promise<number>((resolve) => gatewayWorker.once('message', resolve));
const client = new GatewayClient(`http://127.0.0.1:${gatewayPortNumber}`, 30_000);
const httpPort = gatewayPort((method, pathName, input) => client.exchange({ method, path: pathName, ...input }));
const detectorOn = (gateway: GatewayPort) =>
  new FaultDetector({
    model: pointModel,
    book: ruleBook,
    episodes,
    alerts: new AlertService(db, audit),
    port: gateway,
    price: () => ({ price: 0.25, currency: 'EUR' }),
    timezone: () => 'UTC',
    intervalMs: COLLECT_MS,
    floodPerHour: 20,
    logger: createLogger('error'),
    now: () => now,
  });
// Before: the plain answers (a time per sample) in 500-sample slices, as against a gateway that ignores the step.
const plainDetector = detectorOn({ ...httpPort, historyOnGrid: undefined });
// After: codes/history with its optional step, a month of one code per answer.
const gridDetector = detectorOn(httpPort);
const timedReplay = async (detector: FaultDetector, reads: number) => {
  const cpuBefore = process.cpuUsage();
  const t0 = performance.now();
  const out = await detector.replay(rule, { from, to, reads });
  return {
    wall: (performance.now() - t0) / 1000,
    cpu: cpuSeconds(cpuBefore),
    episodes: out.episodes.length,
    wasteKwh: out.episodes.reduce((sum, e) => sum + e.wasteKwh, 0),
  };
};
type Timed = Awaited<ReturnType<typeof timedReplay>>;
// Alternated, each twice, the better of the two kept: the shared machine's load moves between runs.
const best = (a: Timed, b: Timed) => (a.wall <= b.wall ? a : b);
const runs = [
  { name: 'plain answers in 500-sample slices, one read at a time (before)', detector: plainDetector, reads: 1 },
  { name: 'on the grid (step), one read at a time', detector: gridDetector, reads: 1 },
  { name: 'on the grid (step), 2 reads in flight', detector: gridDetector, reads: 2 },
  { name: 'on the grid (step), 4 reads in flight', detector: gridDetector, reads: 4 },
];
const firstRound: Timed[] = [];
for (const run of runs) firstRound.push(await timedReplay(run.detector, run.reads));
const timed = [];
for (const [i, run] of runs.entries()) timed.push(best(firstRound[i]!, await timedReplay(run.detector, run.reads)));
const baseline = timed[0]!;
console.log('replay over loopback HTTP (gateway in a worker thread; process CPU counts the worker too):');
for (const [i, run] of runs.entries()) {
  const t = timed[i]!;
  console.log(
    `  ${run.name}: ${fmt(t.wall)} s wall, ${fmt(t.cpu)} s CPU (${fmt(t.wall / baseline.wall)}× the plain answers' wall); ${t.episodes} episodes, ${fmt(t.wasteKwh, 1)} kWh`,
  );
}
gatewayWorker.postMessage('stop');
await new Promise((resolve) => gatewayWorker.once('exit', resolve));

closeDatabase(db);
fs.rmSync(dataDir, { recursive: true, force: true });
