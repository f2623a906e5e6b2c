// Admin → history import (issue 52) in the fast screen tier (written before the screen was split into parts, issue 57
// item 3, to hold its behaviour; Chromium's historyImport.test.ts keeps the journey through the real API): no file
// refused before asking; the dry run's summary, per-meter table and refused rows; the import started as a job whose
// progress is polled until done, then the written report.
import './dom.ts';
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import type { Answer } from '../../../src/web/app/api/types.ts';
import AdminImport from '../../../src/web/app/screens/AdminImport.tsx';
import { $, $$, byText, calls, labelled, mount, rendered, stubApi, text, unmount, waitFor } from './screen.ts';

after(unmount);

type Report = Answer<'/api/energy/import', 'post'>;
type Job = Answer<'/api/energy/import/jobs/{id}'>;
const report = (dryRun: boolean) =>
  ({
    dryRun,
    accepted: true,
    rows: 2976,
    form: 'intervals',
    meters: [
      {
        meterId: 7,
        name: 'Main',
        from: '2026-01-01',
        to: '2026-01-31',
        intervals: { new: 2900, overlapping: 76, estimated: 4, refused: 1 },
        missing: 0,
        empty: 2,
        gaps: 0,
        refused: [{ line: 12, message: 'kwh is not a number' }],
        suspect: { runs: 0, listed: [] },
        quantity: 1234.5,
        unit: 'kWh',
      },
    ],
  }) as unknown as Report;

test('a dry run first with its table and refused rows, then the import as a job polled until done', async () => {
  let polls = 0;
  const job = (state: Job['state'], done: number) =>
    ({ id: 'j1', state, done, total: 4, rows: 2976, meters: 1, undone: null, error: null, report: state === 'done' ? report(false) : null }) as unknown as Job;
  stubApi({
    'POST /api/energy/import': () => report(true),
    'POST /api/energy/import/jobs': () => job('running', 1),
    'GET /api/energy/import/jobs/{id}': () => (++polls < 2 ? job('running', 3) : job('done', 4)),
  });
  const screen = await mount(AdminImport, {}, 'admin');
  byText('button', 'Check the file (dry run)', screen)!.click();
  await waitFor(() => text($('p.problem', screen)) === 'Choose a CSV file first.', 'the missing file refused');
  assert.equal(calls.length, 0);

  const input = labelled('CSV file') as HTMLInputElement;
  Object.defineProperty(input, 'files', { value: [new File(['meter,start,kwh\n'], 'portal.csv', { type: 'text/csv' })], configurable: true });
  input.dispatchEvent(new window.Event('change', { bubbles: true }));
  await rendered();
  byText('button', 'Check the file (dry run)', screen)!.click();
  await waitFor(() => $$('[data-section="dry-run"]', screen).length === 1, 'the dry run');
  assert.equal(text($('[data-field="dry-summary"]', screen)), '2,976 rows for 1 meters (energy per interval).');
  assert.equal(text($('table[data-report="dry"] [data-field="overlapping"]', screen)), '76');
  assert.equal(text($('[data-refused="7"] li', screen)), 'Line 12: kwh is not a number');
  assert.match(text($('[data-section="dry-run"] .notice.warn', screen)), /^76 intervals already stored will be replaced/);
  assert.deepEqual(calls[0].params.query, { dryRun: true, replace: false });

  byText('button', 'Import', screen)!.click();
  await waitFor(() => $$('[data-section="job"][data-state="running"] progress', screen).length === 1, 'the running job');
  await waitFor(() => $$('[data-section="job"][data-state="done"]', screen).length === 1, 'the job done');
  assert.equal(text($('[data-section="job"] p.done', screen)), 'Imported: 2,976 rows for 1 meters.');
  assert.equal($$('table[data-report="written"]', screen).length, 1);
  assert.ok(polls >= 2);
});
