// Example answers of the report routes (issue 45 item 14), shaped on real answers: example data (example.com).
import { pageExample } from '../../platform/http/schemas.ts';

export const REPORT_TEMPLATES_EXAMPLE = {
  items: [
    { id: 1, key: 'weekly-energy', name: 'Weekly energy', description: 'Energy per day and per area over the last 7 days, with cost, carbon and peak demand' },
    {
      id: 6,
      key: 'month-to-date',
      name: 'Month to date',
      description: 'Energy, cost and carbon per day and per area from the first of this calendar month up to and including today, with peak demand',
    },
  ],
};

export const REPORT_PLAN_EXAMPLE = {
  id: 3,
  name: 'Weekly energy',
  templateId: 1,
  cron: '0 7 * * 1',
  format: 'pdf',
  recipients: ['energy@example.com'],
  enabled: true,
  lastRunAt: '2026-01-12T07:00:00.412Z',
  createdAt: '2026-01-05T10:12:44.020Z',
  updatedAt: '2026-01-05T10:12:44.020Z',
};
export const REPORT_PLAN_PAGE_EXAMPLE = pageExample(REPORT_PLAN_EXAMPLE);

export const REPORT_RUN_EXAMPLE = {
  id: 17,
  planId: 3,
  trigger: 'schedule',
  requestedBy: null,
  status: 'ok',
  format: 'pdf',
  periodFrom: '2026-01-05',
  periodTo: '2026-01-12',
  startedAt: '2026-01-12T07:00:00.412Z',
  finishedAt: '2026-01-12T07:00:02.400Z',
  durationMs: 1988,
  sizeBytes: 25240,
  mailAttempts: 1,
  delivery: 'sent',
  error: null,
  files: [
    { name: 'weekly-energy_2026-01-05_2026-01-11.pdf', contentType: 'application/pdf', sizeBytes: 23619 },
    { name: 'weekly-energy_2026-01-05_2026-01-11.csv', contentType: 'text/csv; charset=utf-8', sizeBytes: 1621 },
  ],
  filesDeletedAt: null,
};
export const REPORT_RUN_PAGE_EXAMPLE = pageExample(REPORT_RUN_EXAMPLE);
