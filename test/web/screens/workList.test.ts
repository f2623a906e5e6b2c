// The work list (components/WorkList.tsx) as the faults and maintenance screens use it, in the fast screen tier: the
// status filter sends its status (and "any status" none), rows carry their id, an operator moves a row's status and
// gets the actions column, a viewer reads the status as text with neither, an empty list says so, and a kept draft
// opens the form at once.
import './dom.ts';
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Answer } from '../../../src/web/app/api/types.ts';
import Faults from '../../../src/web/app/screens/Faults.tsx';
import Maintenance from '../../../src/web/app/screens/Maintenance.tsx';
import { $, $$, byText, calls, fill, labelled, mount, refuse, stubApi, text, unmount, waitFor } from './screen.ts';

after(unmount);

type Fault = Answer<'/api/faults'>['items'][number];
type Record = Answer<'/api/maintenance'>['items'][number];
const at = '2026-11-28T08:00:00.000Z';
const FAULTS: Fault[] = [
  {
    id: 3,
    device: 'AHU-1',
    area: 'Roof',
    severity: 'high',
    status: 'open',
    description: 'Fan belt squeals',
    reportedAt: at,
    createdAt: at,
    updatedAt: at,
    assignee: null,
    code: null,
    resolvedAt: null,
  },
  {
    id: 4,
    device: 'Boiler 2',
    area: null,
    severity: 'low',
    status: 'in_progress',
    description: 'Drips',
    reportedAt: at,
    createdAt: at,
    updatedAt: at,
    assignee: null,
    code: null,
    resolvedAt: null,
  },
];
const RECORDS: Record[] = [
  {
    id: 9,
    equipment: 'Chiller 1',
    type: 'inspection',
    status: 'planned',
    scheduledAt: at,
    assignee: null,
    description: 'Yearly check',
    cost: null,
    alertId: null,
    faultId: null,
    completedAt: null,
    createdAt: at,
    updatedAt: at,
  },
];

const statusOf = (name: string) => $(`select[aria-label="Status of ${name}"]`);
const queried = (path: string) => calls.filter((c) => c.method === 'GET' && c.path === path).map((c) => c.params.query?.status);

test('faults for an operator: the filter, a status move, the actions column and a refused move shown', async () => {
  sessionStorage.clear();
  let refuseMove = false;
  stubApi({
    'GET /api/faults': ({ params }) => {
      const wanted = params.query?.status as string[] | undefined;
      const items = FAULTS.filter((f) => !wanted || wanted.includes(f.status));
      return { items, page: 1, pageSize: 100, total: items.length };
    },
    'PUT /api/faults/{id}': () => (refuseMove ? refuse(409, 'the fault is closed') : FAULTS[0]),
    'POST /api/faults/{id}/maintenance': () => RECORDS[0],
  });
  const screen = await mount(Faults, {}, 'operator');
  await waitFor(() => $$('tr[data-fault-id]', screen).length === 2, 'both faults');
  assert.deepEqual($$('thead th', screen).map(text), ['Device', 'Severity', 'Status', 'Noticed at', 'Description', 'Actions']);
  assert.equal(text($('tr[data-fault-id="3"] th[scope="row"]', screen)), 'AHU-1 · Roof');
  assert.equal(statusOf('AHU-1').closest('td')?.cellIndex, 2, 'the status is the third column');
  assert.equal(byText('button', 'Report a fault', screen)?.getAttribute('aria-expanded'), 'false');

  await fill(labelled('Status'), 'in_progress');
  await waitFor(() => $$('tr[data-fault-id]', screen).length === 1, 'the in-progress fault alone');
  await fill(labelled('Status'), '');
  await waitFor(() => $$('tr[data-fault-id]', screen).length === 2, 'every fault again');
  assert.deepEqual(queried('/api/faults'), [undefined, ['in_progress'], undefined]);

  await fill(statusOf('AHU-1'), 'resolved');
  await waitFor(() => queried('/api/faults').length === 4, 'the list again after the move');
  assert.deepEqual(calls.find((c) => c.method === 'PUT')?.params.path, { id: 3 });
  assert.deepEqual(calls.find((c) => c.method === 'PUT')?.body, { status: 'resolved' });

  refuseMove = true;
  await fill(statusOf('Boiler 2'), 'closed');
  await waitFor(() => text($('.problem', screen)).includes('the fault is closed'), 'the refused move');

  byText('tr[data-fault-id="4"] button', 'Open a maintenance record', screen)?.click();
  await waitFor(() => text($('.done', screen)) === 'Maintenance record opened for Boiler 2.', 'the maintenance opened');

  byText('button', 'Report a fault', screen)!.click();
  await waitFor(() => $$('form[aria-label="Report a fault"]', screen).length === 1, 'the fault form');
});

test('maintenance for a viewer: status as text, no add button, no actions; an empty filter says so', async () => {
  sessionStorage.clear();
  stubApi({
    'GET /api/maintenance': ({ params }) => {
      const items = params.query?.status ? [] : RECORDS;
      return { items, page: 1, pageSize: 100, total: items.length };
    },
  });
  const screen = await mount(Maintenance, {}, 'viewer');
  await waitFor(() => $$('tr[data-maintenance-id="9"]', screen).length === 1, 'the record');
  assert.deepEqual($$('thead th', screen).map(text), ['Equipment', 'Type', 'Status', 'Scheduled for', 'Assigned to', 'Description']);
  assert.deepEqual($$('tr[data-maintenance-id="9"] > *', screen).map(text).slice(0, 3), ['Chiller 1', 'Inspection', 'Planned']);
  assert.equal($$('tbody select', screen).length, 0);
  assert.equal(byText('button', 'Add a maintenance record', screen), undefined);
  await fill(labelled('Status'), 'done');
  await waitFor(() => byText('p.muted', 'No maintenance records.', screen), 'the empty list said');
  assert.deepEqual(queried('/api/maintenance'), [undefined, ['done']]);
});

test('a kept draft opens the maintenance form at once for an operator', async () => {
  sessionStorage.clear();
  sessionStorage.setItem('ems.draft.maintenance.new', JSON.stringify({ equipment: 'Pump 3' }));
  stubApi({ 'GET /api/maintenance': () => ({ items: [], page: 1, pageSize: 100, total: 0 }) });
  const screen = await mount(Maintenance, {}, 'operator');
  const form = await waitFor(() => $$('form[aria-label="Add a maintenance record"]', screen)[0], 'the form with the draft');
  assert.equal((labelled('Equipment') as HTMLInputElement).value, 'Pump 3');
  assert.equal(byText('button', 'Add a maintenance record', screen)?.getAttribute('aria-expanded'), 'true');
  assert.ok($('[data-notice="draft-restored"]', form));
  sessionStorage.clear();
});
