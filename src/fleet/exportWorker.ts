// The entry of the XLSX export worker (started by export.ts): builds one workbook from the rows it was given and answers
// its bytes, then ends. Nothing imports this file.
import { isMainThread, parentPort, workerData } from 'node:worker_threads';
import { answerParent, yieldCpuToRequests } from '../platform/workerThread.ts';
import { buildWorkbook, type ExportJob } from './export.ts';

if (!isMainThread && parentPort && typeof (workerData as ExportJob | undefined)?.kind === 'string') {
  const port = parentPort;
  yieldCpuToRequests();
  void answerParent(
    (answer) => port.postMessage(answer),
    () => buildWorkbook(workerData as ExportJob),
  );
}
