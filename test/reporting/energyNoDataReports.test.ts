// No data is never zero in a report either: on a site without meters (hand-entered day totals), a day with no total is
// an empty cell in the report's CSV and "no data" in its PDF, and the days with a total agree with the weekly chart.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { addDays, siteDay } from '../../src/platform/time/calendar.ts';
import { insertEnergyDaily } from '../helpers/facilityRows.ts';
import { pdfText, runReportNow } from '../helpers/reportRun.ts';
import { startTestServer, tempDir, type TestServer, type TestUser } from '../helpers/server.ts';

let server: TestServer;
let admin: TestUser;
const today = siteDay('UTC');
/** Every third day of the last two weeks has no total. */
const recorded = (offset: number) => offset % 3 !== 0;

before(async () => {
  server = await startTestServer();
  admin = await server.createUser({ role: 'admin' });
  for (let i = 1; i <= 14; i += 1) if (recorded(i)) insertEnergyDaily(server.service.deps.db.sqlite, addDays(today, -i), 100 + i * 7);
});
after(() => server.close());

test('a weekly report of hand-entered totals: missing days empty (CSV) and "no data" (PDF), the rest as the weekly chart', async () => {
  const { file } = await runReportNow(server, admin.accessToken, {
    cron: '0 6 * * 1',
    recipients: ['e@example.test'],
    name: 'Weekly',
    templateId: 'weekly-energy',
  });
  const csv = (await file('.csv')).toString().replace(/\r\n/g, '\n');
  const daily = csv
    .split('\n\n')
    .find((block) => block.startsWith('daily'))!
    .split('\n')
    .slice(2);
  assert.equal(daily.length, 7);
  const weekly = (await server.request('GET', '/api/overview/energy/weekly', { token: admin.accessToken })).body;
  let missing = 0;
  for (const row of daily) {
    const [day, kwh, cost, carbon] = row.split(',');
    const offset = Math.round((Date.parse(today) - Date.parse(day)) / 86_400_000);
    if (recorded(offset)) {
      assert.equal(Number(kwh), 100 + offset * 7, `${day} as recorded`);
    } else {
      missing += 1;
      assert.deepEqual([kwh, cost, carbon], ['', '', ''], `${day}: no data, not 0`);
    }
    const chart = weekly.days.find((d: { day: string }) => d.day === day);
    if (chart) assert.equal(chart.kwh, kwh === '' ? null : Number(kwh), `${day}: the weekly chart agrees`);
  }
  assert.ok(missing >= 2);
  // The PDF's daily table says "no data" once per missing day.
  const dir = tempDir('ems-nodata-report-');
  try {
    const text = await pdfText(await file('.pdf'), path.join(dir, 'report.pdf'));
    assert.equal(text.match(/\d{4} +no data/g)?.length ?? 0, missing, text);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
