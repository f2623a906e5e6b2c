// The desk → runs and review in the fast screen tier (written before the screen was split into parts, issue 57 item 3,
// to hold its behaviour; Chromium's billing.test.ts and desk.test.ts keep the runs through the real API): the latest
// period chosen with its runs; the issued run reviewed with its reconciliation; a restatement computed and reviewed at
// once with its issue button; another period without runs says so; a period added is chosen.
import './dom.ts';
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import type { Answer } from '../../../src/web/app/api/types.ts';
import DeskRuns from '../../../src/web/app/screens/DeskRuns.tsx';
import { $, $$, byText, calls, fill, labelled, mount, stubApi, text, unmount, waitFor } from './screen.ts';

after(unmount);

type Run = Answer<'/api/billing/runs/{id}'>;
const run = (id: number, status: 'draft' | 'issued', kind = 'regular') =>
  ({
    id,
    status,
    kind,
    issuedAt: status === 'issued' ? '2026-02-02T09:00:00.000Z' : null,
    computedAt: '2026-02-01T09:00:00.000Z',
    statements: [],
    summary: {
      currency: 'EUR',
      reconciliation: { siteTotalCents: 100_000, statementsCents: 82_550, landlordCents: 17_450 },
      quality: { intervals: 2976, missing: 0, missingPercent: 0, estimated: 30, estimatedPercent: 1.01 },
    },
  }) as unknown as Run;
const period = (id: number, name: string, from: string, to: string) => ({ id, name, from, to });

test('the latest period with its runs, the issued run reviewed, a restatement computed and reviewed, a period added', async () => {
  const runs: Record<number, Run[]> = { 2: [run(4, 'issued')], 3: [] };
  const periods = [period(1, 'January', '2026-01-01', '2026-02-01'), period(2, 'February', '2026-02-01', '2026-03-01')];
  stubApi({
    'GET /api/billing/periods': () => ({ items: periods }),
    'GET /api/billing/settings': () => ({ maxMissingPercent: 5, maxEstimatedPercent: 10, supplierBillTolerancePercent: 2 }),
    'GET /api/billing/periods/{id}/runs': (call) => ({ items: runs[call.params.path?.id as number] ?? [] }),
    'POST /api/billing/periods/{id}/runs': (call) => {
      const made = run(5, 'draft', 'restatement');
      runs[call.params.path?.id as number].push(made);
      return made;
    },
    'POST /api/billing/periods': (call) => {
      const made = period(3, (call.body as { name: string }).name, '2026-03-01', '2026-04-01');
      periods.push(made);
      return made;
    },
  });
  const screen = await mount(DeskRuns, {}, 'admin');
  await waitFor(() => $$('[data-review="4"]', screen).length === 1, 'the issued run reviewed');
  const asked = () => calls.filter((c) => c.path === '/api/billing/periods/{id}/runs' && c.method === 'GET').map((c) => c.params.path?.id);
  assert.deepEqual(asked(), [2], 'the latest period chosen');
  assert.equal(text($('[data-review="4"] [data-field="landlord"]', screen)), '€174.50');
  assert.equal(byText('button', 'Issue run 4', screen), undefined, 'an issued run is not issued again');

  byText('button', 'Compute a restatement', screen)!.click();
  await waitFor(() => $$('[data-review="5"]', screen).length === 1, 'the restatement reviewed');
  assert.equal(text($('p.done', screen)), 'Run 5 computed: review it below before issuing.');
  assert.deepEqual(
    $$('li[data-run]', screen).map((li) => li.dataset.run),
    ['4', '5'],
  );
  assert.ok(byText('button', 'Issue run 5', screen));

  await fill(labelled('Billing period'), '1');
  await waitFor(() => byText('p.muted', 'No run for this period yet.', screen), 'no runs said');

  await fill(labelled('Name (optional)'), 'March');
  await fill(labelled('First day'), '2026-03-01');
  await fill(labelled('Last day (included)'), '2026-03-31');
  byText('button', 'Add the period', screen)!.click();
  await waitFor(() => asked().at(-1) === 3, 'the new period chosen');
  await waitFor(() => text($('p.done', screen)) === 'Period “March” added.', 'the period added');
  assert.deepEqual(calls.find((c) => c.path === '/api/billing/periods' && c.method === 'POST')!.body, { name: 'March', from: '2026-03-01', to: '2026-04-01' });
});
