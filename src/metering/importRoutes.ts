// /api/energy/import: past intervals or counter readings from a CSV, at once or as a background job with progress and cancel.
import { defineRoute, Reply } from '../platform/http/route.ts';
import { UnsupportedMediaType } from '../platform/errors.ts';
import { ErrorBody, IdParams } from '../platform/http/schemas.ts';
import type { HistoryImport } from './historyImport.ts';
import type { ImportJobs } from './importJobs.ts';
import { ImportJob, ImportJobQuery, ImportQuery, ImportReport } from './schemas.ts';

const tags = ['energy'];

export type HistoryImportRouteNeeds = { history: HistoryImport; importJobs: ImportJobs };

export function historyImportRoutes({ history, importJobs }: HistoryImportRouteNeeds) {
  return [
    defineRoute({
      method: 'POST',
      path: '/api/energy/import',
      access: 'admin',
      summary: 'Import past intervals or counter readings from a CSV (dryRun reports what it would change)',
      description:
        'Body: the CSV itself (Content-Type: text/csv), a header line then one row per interval or reading. Columns: `meter` (id or code), ' +
        "`start` (ISO 8601 with Z or an offset, on a 15-minute boundary) and either `kwh` (the interval's energy; an optional `end` makes a row " +
        'cover several intervals, spread evenly and flagged estimated) or `reading` (a counter in kWh: steps are checked like live readings: ' +
        'small decreases are held as jitter, a reset only a real drop, a rollover only at the range, spans over 7 days left missing). ' +
        "Separators `,` `;` (then a decimal comma) or tab. Refused rows: a time in the future or today (the collector's), more than 3660 days ago, " +
        'negative energy or an implausible step. Bad rows (400) and refused rows (400; a dry run reports them) name their lines; an overlap ' +
        'with stored intervals is 409 unless replace=true. Nothing is written when the file is refused. Imported intervals are measured ' +
        '(flag 32). Imports run one at a time; each is audited (import.start, import). At most 5,000,000 rows or 256 MiB.',
      tags,
      rawBody: { contentType: 'text/csv' },
      example: 'meter,start,kwh\nmeter.main.kwh,2025-01-06T00:00:00Z,12.5\nmeter.main.kwh,2025-01-06T00:15:00Z,12.75\n',
      schemas: { query: ImportQuery, response: { 200: ImportReport, 400: ErrorBody, 409: ErrorBody, 413: ErrorBody, 415: ErrorBody } },
      handler: ({ query, user, ctx }) => {
        if (!ctx.is('text/csv', 'text/plain')) throw new UnsupportedMediaType('Send the CSV as the body (Content-Type: text/csv)');
        const encoding = (ctx.get('content-encoding') || 'identity').trim().toLowerCase();
        if (encoding !== 'identity') throw new UnsupportedMediaType('Send the CSV uncompressed (no Content-Encoding)');
        return history.run(ctx.req, { dryRun: query.dryRun, replace: query.replace }, user);
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/api/energy/import/jobs',
      access: 'admin',
      summary: 'Import past intervals as a background job: checked in the request, written after it with progress and cancel',
      description:
        'The same CSV, rules and refusals as POST /api/energy/import (bad or refused rows 400, an overlap 409 unless replace=true: nothing ' +
        'is queued then). A file that passes answers 202 with the job; its write runs in slices (one at a time with other imports) and ' +
        'GET /api/energy/import/jobs/{id} tells its progress and, once done, its report. POST …/cancel stops it between two slices and ' +
        'takes back every interval it wrote (the old values with replace; the virtual meters and month peaks follow), audited as ' +
        'import.cancel. Jobs are kept in memory (the last 20); a restart mid-write leaves the slices written (the audit trail shows ' +
        'import.start without import).',
      tags,
      rawBody: { contentType: 'text/csv' },
      example: 'meter,start,kwh\nmeter.main.kwh,2025-01-06T00:00:00Z,12.5\nmeter.main.kwh,2025-01-06T00:15:00Z,12.75\n',
      schemas: { query: ImportJobQuery, response: { 202: ImportJob, 400: ErrorBody, 409: ErrorBody, 413: ErrorBody, 415: ErrorBody } },
      handler: async ({ query, user, ctx }) => {
        if (!ctx.is('text/csv', 'text/plain')) throw new UnsupportedMediaType('Send the CSV as the body (Content-Type: text/csv)');
        const encoding = (ctx.get('content-encoding') || 'identity').trim().toLowerCase();
        if (encoding !== 'identity') throw new UnsupportedMediaType('Send the CSV uncompressed (no Content-Encoding)');
        return new Reply(202, await importJobs.start(ctx.req, { replace: query.replace }, user));
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/api/energy/import/jobs/:id',
      access: 'admin',
      summary: 'A background import: its state, progress (done of total steps) and, once done, its report',
      description: 'Poll it while the state is running or cancelling. Changes nothing.',
      tags,
      schemas: { params: IdParams, response: { 200: ImportJob, 404: ErrorBody } },
      handler: ({ params }) => importJobs.get(params.id),
    }),
    defineRoute({
      method: 'POST',
      path: '/api/energy/import/jobs/:id/cancel',
      access: 'admin',
      summary: 'Cancel a background import: it stops between two slices and takes back what it wrote',
      description: 'Answers the job, now cancelling; it ends cancelled once its written intervals are taken back. A job that has ended: 409.',
      tags,
      schemas: { params: IdParams, response: { 200: ImportJob, 404: ErrorBody, 409: ErrorBody } },
      handler: ({ params }) => importJobs.cancel(params.id),
    }),
  ];
}
