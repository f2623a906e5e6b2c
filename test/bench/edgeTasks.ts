// The longest event-loop block of the service's other background tasks (issue 29): a backup (copy, integrity check,
// retention), the weekly restore drill, the daily energy anomaly check, and building a report (content and PDF), on a seeded data dir (50 users,
// 10,000 alerts, faults, maintenance, and BENCH_EDGE_TASK_METERS × BENCH_EDGE_TASK_DAYS of interval data). Loads the
// code under test from `root` (this checkout or the code before), like edgeBlocks.ts; the seeded dir is shared.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { addDays } from '../../src/platform/time/calendar.ts';
import { findAt, pathAt } from './baselinePaths.ts';
import { longestBlock, type Block } from './edgeBlocks.ts';
import { seedDataDir } from './seed.ts';

export const TASK_METERS = Number(process.env.BENCH_EDGE_TASK_METERS ?? 500);
export const TASK_DAYS = Number(process.env.BENCH_EDGE_TASK_DAYS ?? 365);

/**
 * A data dir with the bench seed (users, 10,000 alerts, faults, maintenance) and `meters` × `days` of interval data up
 * to today through the interval store: a daily curve per meter with 5 % noise. Answers the seconds it took.
 */
export async function seedEdgeDataDir(dataDir: string, meters = TASK_METERS, days = TASK_DAYS): Promise<number> {
  const started = performance.now();
  await seedDataDir(dataDir);
  const { createSiteMeters, openSeeding, seedDays } = await import('./seeding.ts');
  const seeded = openSeeding(dataDir);
  try {
    const today = new Date().toISOString().slice(0, 10);
    seedDays(seeded, createSiteMeters(seeded, meters), addDays(today, -days + 1), addDays(today, 1));
  } finally {
    seeded.close();
  }
  return (performance.now() - started) / 1000;
}

export async function measureTasks(dataDir: string, root: string): Promise<Block[]> {
  // Today's paths, or where a baseline before the restructuring holds them (baselinePaths.ts).
  const load = (file: string) => import(pathToFileURL(path.join(root, pathAt(root, file))).href);
  const [audit, client, module, backup, logger, content, pdf, analysis] = await Promise.all(
    [
      'src/platform/db/auditTrail.ts',
      'src/platform/db/client.ts',
      'src/energy/module.ts',
      'src/operations/backup/service.ts',
      'src/platform/logger.ts',
      'src/reporting/reports/content.ts',
      'src/reporting/reports/renderPdf.ts',
      'src/analysis/module.ts',
    ].map(load),
  );
  const db = client.openDatabase(client.databasePath(dataDir));
  const log = logger.createLogger('silent');
  // The box's own noise first: a loop doing nothing but timers, over 5 s.
  const idle = await longestBlock(() => new Promise((resolve) => setTimeout(resolve, 5000)));
  const rows: Block[] = [{ task: "idle event loop, 5 s (the box's own noise)", maxMs: idle.maxMs, gcMs: idle.gcMs, activeMs: idle.activeMs, note: '' }];
  try {
    const energy = module.buildEnergy(db, new audit.AuditLog(db));
    const size = fs.statSync(client.databasePath(dataDir)).size / 1024 / 1024;
    let outcome: { status: string; backup?: { name: string } } = { status: '' };
    let measured = await longestBlock(async () => {
      outcome = await backup.performBackup(db, dataDir, log, { trigger: 'manual' });
    });
    rows.push({
      task: `backup of a ${size.toFixed(0)} MiB database (copy, integrity check, retention)`,
      maxMs: measured.maxMs,
      gcMs: measured.gcMs,
      activeMs: measured.activeMs,
      note: `${outcome.status}, ${(measured.ms / 1000).toFixed(1)} s in all`,
    });
    const offThread = typeof backup.performDrillOffThread === 'function';
    let drill: { status: string } | null = null;
    measured = await longestBlock(async () => {
      drill = offThread
        ? await backup.performDrillOffThread(dataDir, log, { backup: outcome.backup?.name, trigger: 'bench' })
        : backup.performDrill(dataDir, log, { backup: outcome.backup?.name, trigger: 'bench' });
    });
    rows.push({
      task: 'restore drill (restore into a temp dir, integrity check, counts, migrations)',
      maxMs: measured.maxMs,
      gcMs: measured.gcMs,
      activeMs: measured.activeMs,
      note: `${(drill as { status: string } | null)?.status ?? 'skipped'}${offThread ? ' in a worker thread' : ' on the request thread'}, ${(measured.ms / 1000).toFixed(1)} s in all`,
    });
    // The daily anomaly check of yesterday (the site and each of its areas): night base load over 28 days, and the
    // baseline's year of days. No gateway here: the temperatures fail, so it measures every energy read and no fit.
    const noGateway = { history: async () => Promise.reject(new Error('no gateway in the bench')) };
    const raised: unknown[] = [];
    const alerts = { fromGatewayAlarm: (alarm: unknown) => raised.push(alarm) };
    // The baseline root may predate the analysis pieces built once (buildAnalysis(db, audit, energy) and a factory per caller).
    const watch =
      analysis.buildAnalysis.length === 3
        ? analysis.buildAnalysis(db, new audit.AuditLog(db), energy).anomalies(noGateway, alerts, log)
        : analysis.buildAnalysis({ db, audit: new audit.AuditLog(db), energy, ...energy, iot: noGateway, alerts, logger: log }).anomalies;
    const yesterday = addDays(new Date().toISOString().slice(0, 10), -1);
    measured = await longestBlock(() => watch.check(yesterday));
    rows.push({
      task: `energy anomaly check of a day (site and ${energy.figures.areaNames().length} areas)`,
      maxMs: measured.maxMs,
      gcMs: measured.gcMs,
      activeMs: measured.activeMs,
      note: `${raised.length} findings, ${(measured.ms / 1000).toFixed(1)} s in all`,
    });
    const builder = new content.ReportContentBuilder(db, energy.site);
    // Since edgeloop2 the service builds reports in a worker thread (src/reporting/reports/offThread.ts); before, on the loop.
    const workersModule = findAt(root, 'src/reporting/reports/offThread.ts') ? await load('src/reporting/reports/offThread.ts') : null;
    const workers = workersModule ? new workersModule.ReportWorkers(client.databasePath(dataDir)) : null;
    for (const template of ['weekly-energy', 'monthly-energy', 'alerts-faults']) {
      let bytes = 0;
      // The first PDF loads pdfkit and its fonts: measured apart, as the first report after a start.
      for (const round of ['first', 'next']) {
        measured = await longestBlock(async () => {
          if (workers) {
            const built = await workers.build({ template, title: template, now: Date.now(), format: 'pdf' });
            bytes = built.files[0].content.length;
          } else {
            const built = builder.build(template, template, Date.now());
            bytes = (await pdf.renderPdf(built)).length;
          }
        });
        rows.push({
          task: `report building: ${template} content + PDF (${round} after start)`,
          maxMs: measured.maxMs,
          gcMs: measured.gcMs,
          activeMs: measured.activeMs,
          note: `${(bytes / 1024).toFixed(0)} KiB${workers ? ' in a worker thread' : ' on the request thread'}, ${(measured.ms / 1000).toFixed(2)} s in all`,
        });
      }
    }
  } finally {
    client.closeDatabase(db);
  }
  return rows;
}

/** A seeded data dir kept between runs of the bench (seeding a year of 500 meters takes minutes). */
export async function seededDir(meters = TASK_METERS, days = TASK_DAYS): Promise<{ dir: string; seededSec: number | null }> {
  const dir = path.join(os.tmpdir(), `ems-bench-edge-seeded-${meters}x${days}`);
  if (fs.existsSync(path.join(dir, '.seeded'))) return { dir, seededSec: null };
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  const seededSec = await seedEdgeDataDir(dir, meters, days);
  fs.writeFileSync(path.join(dir, '.seeded'), `${new Date().toISOString()}\n`);
  return { dir, seededSec };
}
