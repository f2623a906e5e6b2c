// The fleet's XLSX exports (src/fleet/export.ts): how long each workbook takes at portfolio scale (500 sites; the alert
// export's cap of 10,000 alerts), against a same-run baseline: JSON.stringify of the same rows, which is what the JSON
// route costs before the network. Then the longest event-loop stall while the alerts workbook is built on the request
// thread and in the export worker, as the service does (workbookOffThread). Prints figures; asserts nothing.
// `node --import tsx test/bench/fleetExport.ts` (BENCH_SITES, BENCH_ALERTS scale it).
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { ALERT_EXPORT_LIMIT, alertsWorkbook, euiWorkbook, healthWorkbook, workbookOffThread } from '../../src/fleet/export.ts';
import type { EuiRow, PortfolioAlert, SiteHealthRow } from '../../src/fleet/portfolio.ts';

const SITES = Number(process.env.BENCH_SITES ?? 500);
const ALERTS = Number(process.env.BENCH_ALERTS ?? ALERT_EXPORT_LIMIT);
const RUNS = 7;
const id = (i: number) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`;

const health: SiteHealthRow[] = Array.from({ length: SITES }, (_, i) => ({
  id: id(i),
  name: `Site ${i}`,
  boxName: 'EMS',
  installId: null,
  status: 'ok',
  lastContactAt: new Date(Date.now() - i * 1000).toISOString(),
  syncLagSec: 600 + i,
  unsentRows: i % 50,
  clockSkewSec: i % 7,
  completeness: 1 - (i % 10) / 100,
  version: '2.4.0',
  lastBackupAgeSec: 3600 * (i % 60),
  lastRefusal: null,
  openAlerts: i % 5,
  grade: 'healthy',
  reasons: [],
}));
const eui: EuiRow[] = Array.from({ length: SITES }, (_, i) => ({
  id: id(i),
  name: `Site ${i}`,
  floorAreaM2: 1000 + i,
  eui: 100 + i / 3,
  euiLastYear: 95 + i / 3,
  change: 0.05,
  rank: i + 1,
  byCommodity: Object.fromEntries(['electricity', 'gas', 'heat'].map((c) => [c, { eui: 40 + i / 9, euiLastYear: 38, kwh: 40_000 + i, kwhLastYear: 38_000 }])),
}));
const alerts: PortfolioAlert[] = Array.from({ length: ALERTS }, (_, i) => ({
  siteId: id(i % SITES),
  siteName: `Site ${i % SITES}`,
  source: 'site',
  id: String(i),
  title: `Meter ${i} silent for 2 hours`,
  level: i % 3 ? 'warning' : 'critical',
  status: 'active',
  occurredAt: new Date(Date.now() - i * 60_000).toISOString(),
}));

async function time(work: () => unknown): Promise<{ median: number; max: number }> {
  const runs: number[] = [];
  await work(); // warm-up (loads exceljs once)
  for (let i = 0; i < RUNS; i++) {
    const start = performance.now();
    await work();
    runs.push(performance.now() - start);
  }
  runs.sort((a, b) => a - b);
  return { median: runs[Math.floor(RUNS / 2)]!, max: runs[RUNS - 1]! };
}

for (const [name, rows, build] of [
  [`health, ${SITES} sites`, health, () => healthWorkbook(health)],
  [`EUI, ${SITES} sites × 3 commodities`, eui, () => euiWorkbook(eui)],
  [`alerts, ${ALERTS}`, alerts, () => alertsWorkbook(alerts, ALERTS)],
] as const) {
  const xlsx = await time(build);
  const json = await time(() => JSON.stringify({ items: rows }));
  const bytes = (await build()).length;
  console.log(
    `${name}: XLSX median ${xlsx.median.toFixed(1)} ms (max ${xlsx.max.toFixed(1)}), ${(bytes / 1024).toFixed(0)} KiB; ` +
      `JSON.stringify median ${json.median.toFixed(2)} ms; ratio ${(xlsx.median / json.median).toFixed(0)}×`,
  );
}

async function stall(work: () => Promise<unknown>): Promise<{ ms: number; maxStallMs: number }> {
  const histogram = monitorEventLoopDelay({ resolution: 10 });
  histogram.enable();
  const start = performance.now();
  await work();
  const ms = performance.now() - start;
  histogram.disable();
  return { ms, maxStallMs: histogram.max / 1e6 };
}
await workbookOffThread({ kind: 'health', rows: health.slice(0, 1) }); // warm-up: the worker's first start compiles it
const onThread = await stall(() => alertsWorkbook(alerts, ALERTS));
const offThread = await stall(() => workbookOffThread({ kind: 'alerts', rows: alerts, total: ALERTS }));
console.log(
  `alerts ${ALERTS}, event loop: on the request thread ${onThread.ms.toFixed(0)} ms with a ${onThread.maxStallMs.toFixed(0)} ms stall; ` +
    `in the export worker ${offThread.ms.toFixed(0)} ms with a ${offThread.maxStallMs.toFixed(0)} ms stall (ratio ${(onThread.maxStallMs / offThread.maxStallMs).toFixed(0)}×)`,
);
