// The entry of the report worker thread (started by offThread.ts): reports' content and files (PDF through pdfkit,
// CSV, JSON) built away from the request thread, one per message, each on a fresh read-only connection with the same
// code and figures the service uses (energy figures, comparisons and demand charges built here over that connection,
// so no memo outlives a report). Nothing imports this file.
import { Comparisons, DemandCharges } from '../../analysis/index.ts';
import { buildEnergy } from '../../energy/index.ts';
import { isMainThread, parentPort, workerData } from 'node:worker_threads';
import { AuditLog } from '../../platform/db/auditTrail.ts';
import { closeReadOnlyDatabase, openReadOnlyDatabase } from '../../platform/db/client.ts';
import { answerParent, yieldCpuToRequests } from '../../platform/workerThread.ts';
import { ReportContentBuilder } from './content.ts';
import type { ReportWorkerTask } from './offThread.ts';
import { renderFiles, type BuiltReport } from './renderFiles.ts';

async function build(task: ReportWorkerTask): Promise<BuiltReport> {
  const db = openReadOnlyDatabase(task.databaseFile);
  try {
    const energy = buildEnergy(db, new AuditLog(db));
    const analysis = {
      comparisons: new Comparisons(db, energy.figures, energy.tariffs, energy.days),
      demandCharges: new DemandCharges(energy.figures, energy.tariffs),
    };
    const builder = new ReportContentBuilder(db, energy.site, analysis, undefined, energy.commodities);
    const { template, title, now, format } = task.request;
    const content = builder.build(template, title, now);
    return { content, files: await renderFiles(content, format) };
  } finally {
    closeReadOnlyDatabase(db);
  }
}

if (!isMainThread && parentPort && (workerData as { reportWorker?: boolean } | undefined)?.reportWorker) {
  const port = parentPort;
  yieldCpuToRequests();
  port.on(
    'message',
    (task: ReportWorkerTask) =>
      void answerParent(
        (answer) => port.postMessage(answer),
        () => build(task),
      ),
  );
}
