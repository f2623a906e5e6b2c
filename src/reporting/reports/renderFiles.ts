// The files of one report run from its content: PDF + CSV, CSV alone, or JSON. Shared by the report worker thread
// (src/reporting/reports/reportWorker.ts, what the service runs) and the in-thread runner of tests that inject their figures.
import type { MailAttachment } from '../../platform/mail/mailer.ts';
import { lastDay, type ReportContent, type TemplateKey } from './content.ts';
import { renderCsv } from './renderCsv.ts';
import { renderPdf } from './renderPdf.ts';

export type ReportFormat = 'pdf' | 'csv' | 'json';

/** What a run asks for: a template's content at `now`, titled with the plan's name, in the plan's format. */
export type ReportRequest = { template: TemplateKey; title: string; now: number; format: ReportFormat };
export type BuiltReport = { content: ReportContent; files: MailAttachment[] };

export async function renderFiles(content: ReportContent, format: ReportFormat): Promise<MailAttachment[]> {
  const base = `${content.template}_${content.period.from}_${lastDay(content.period.to)}`;
  const csv = { filename: `${base}.csv`, content: renderCsv(content), contentType: 'text/csv; charset=utf-8' };
  if (format === 'csv') return [csv];
  if (format === 'json') return [{ filename: `${base}.json`, content: Buffer.from(JSON.stringify(content, null, 2)), contentType: 'application/json' }];
  return [{ filename: `${base}.pdf`, content: await renderPdf(content), contentType: 'application/pdf' }, csv];
}
