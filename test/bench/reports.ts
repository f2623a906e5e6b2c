// Report benchmark: a monthly energy report (PDF + CSV) for 500 meters, built the way a plan runs it (figures, PDF, CSV,
// files kept, mail handed over), in this process; wall time, CPU time, peak RSS growth and the longest event-loop block per run.
// Prints figures only.
// Run: npm run bench:reports   (BENCH_METERS=500, BENCH_ROUNDS=5)
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Writable } from 'node:stream';
import { AlertService } from '../../src/facility/alerts/service.ts';
import { AuditLog } from '../../src/platform/db/auditTrail.ts';
import { closeDatabase, openDatabase } from '../../src/platform/db/client.ts';
import { addDays } from '../../src/platform/time/calendar.ts';
import { createLogger } from '../../src/platform/logger.ts';
import { createMailer } from '../../src/platform/mail/mailer.ts';
import { ReportContentBuilder } from '../../src/reporting/reports/content.ts';
import { dailyEnergyFigures } from '../helpers/reportEnergy.ts';
import { reportPeriod } from '../../src/reporting/reports/content.ts';
import { ReportRunner } from '../../src/reporting/reports/runs.ts';

const METERS = Number(process.env.BENCH_METERS ?? 500);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const MiB = 1024 * 1024;

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ems-bench-reports-'));
const db = openDatabase(path.join(dataDir, 'ems.db'));
const sink = new Writable({ write: (_chunk, _encoding, done) => done() });
const logger = createLogger('silent', sink);

// Previous month, every day: one row per meter (an energy area) and the site total.
const { from, to } = reportPeriod('monthly-energy', 'UTC', Date.now());
const insert = db.sqlite.prepare('INSERT INTO energy_daily (day, area, kwh) VALUES (?, ?, ?)');
db.sqlite.transaction(() => {
  for (let day = from; day < to; day = addDays(day, 1)) {
    let total = 0;
    for (let meter = 1; meter <= METERS; meter += 1) {
      const kwh = Math.round((20 + ((meter * 7919 + day.charCodeAt(9) * 31) % 400) / 10) * 1000) / 1000;
      total += kwh;
      insert.run(day, `Meter ${String(meter).padStart(3, '0')}`, kwh);
    }
    insert.run(day, 'total', Math.round(total * 1000) / 1000);
  }
})();
const planId = Number(
  db.sqlite
    .prepare(
      `INSERT INTO report_plans (name, template_id, cron, format, recipients, enabled, created_at, updated_at)
       VALUES ('Monthly', (SELECT id FROM report_templates WHERE key = 'monthly-energy'), '0 6 1 * *', 'pdf', '["cfo@example.test"]', 0, ?, ?)`,
    )
    .run(new Date().toISOString(), new Date().toISOString()).lastInsertRowid,
);
const runner = new ReportRunner({
  db,
  audit: new AuditLog(db),
  alerts: new AlertService(db, new AuditLog(db)),
  mailer: createMailer({ from: 'EMS <ems@localhost>', logger }),
  logger,
  directory: path.join(dataDir, 'reports'),
  content: new ReportContentBuilder(db, dailyEnergyFigures(db)),
  clock: { now: () => Date.now() },
  mailRetryDelaysMs: [],
  keepFilesPerPlan: 2,
});

const results: { wallMs: number; cpuMs: number; rssGrowthMiB: number; bytes: number; maxBlockMs: number }[] = [];
for (let round = 0; round < ROUNDS; round += 1) {
  global.gc?.();
  const rssBefore = process.memoryUsage.rss();
  let peak = rssBefore;
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage.rss())), 5);
  const delay = monitorEventLoopDelay({ resolution: 1 });
  delay.enable();
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  const run = await runner.start(planId, 'manual', null).finished;
  const wallMs = performance.now() - started;
  const cpu = process.cpuUsage(cpuBefore);
  clearInterval(sampler);
  delay.disable();
  peak = Math.max(peak, process.memoryUsage.rss());
  if (run.status !== 'ok') throw new Error(`run failed: ${run.error}`);
  results.push({
    wallMs,
    cpuMs: (cpu.user + cpu.system) / 1000,
    rssGrowthMiB: (peak - rssBefore) / MiB,
    bytes: run.sizeBytes ?? 0,
    maxBlockMs: delay.max / 1e6,
  });
}
closeDatabase(db);
fs.rmSync(dataDir, { recursive: true, force: true });

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const fmt = (n: number) => n.toFixed(1);
console.log(`monthly energy report, ${METERS} meters, ${from}..${to} (exclusive), ${ROUNDS} rounds, node ${process.version}, ${os.cpus().length} CPUs`);
results.forEach((r, i) =>
  console.log(
    `  round ${i + 1}: ${fmt(r.wallMs)} ms wall, ${fmt(r.cpuMs)} ms CPU, peak RSS +${fmt(r.rssGrowthMiB)} MiB, longest event-loop block ${fmt(r.maxBlockMs)} ms, ${r.bytes} bytes`,
  ),
);
console.log(
  `  first: ${fmt(results[0].wallMs)} ms; median ${fmt(median(results.map((r) => r.wallMs)))} ms (max ${fmt(Math.max(...results.map((r) => r.wallMs)))}); ` +
    `RSS growth max ${fmt(Math.max(...results.map((r) => r.rssGrowthMiB)))} MiB; targets ≤ 5000 ms, ≤ 50 MiB`,
);
