// The desk → tenants and shares in the fast screen tier (written before the screen was split into parts, issue 57 item
// 3, to hold its behaviour; Chromium's desk.test.ts keeps the journey through the real API): the tenants with the
// meters they share in; each consumption meter's split in words; a split edited adds up live as it is typed (not 100 %
// said before sending, the floor-area key as fractions) and is sent as typed; a split stopped.
import './dom.ts';
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import type { Meter } from '../../../src/web/app/api/types.ts';
import DeskTenants from '../../../src/web/app/screens/DeskTenants.tsx';
import { $, $$, byText, calls, fill, labelled, mount, stubApi, text, unmount, waitFor } from './screen.ts';

after(unmount);

const tenant = (id: number, name: string, floorAreaM2: number) => ({ id, name, kind: 'tenant', floorAreaM2, contactEmail: null });
const meter = (id: number, name: string, role: Meter['role']) => ({ id, name, role, site: false, area: null }) as Meter;

test('tenants with their shares, a split that adds up live and is sent as typed, a split stopped', async () => {
  sessionStorage.clear();
  stubApi({
    'GET /api/billing/tenants': () => ({ items: [tenant(1, 'Bakery', 120), tenant(2, 'Office', 360)] }),
    'GET /api/billing/allocations': () => ({
      items: [
        {
          meterId: 7,
          meterName: 'Hall',
          method: 'percent',
          shares: [{ tenantId: 1, value: 60 }],
          fractions: [{ tenantId: 1, fraction: 0.6 }],
          landlordValue: 40,
          landlordFraction: 0.4,
        },
      ],
    }),
    'GET /api/meters': () => ({
      items: [meter(7, 'Hall', 'import'), meter(8, 'Stairs', 'import'), meter(9, 'Solar', 'generation')],
      page: 1,
      pageSize: 200,
      total: 3,
    }),
    'PUT /api/billing/allocations/{meterId}': () => ({ ok: true }),
    'DELETE /api/billing/allocations/{meterId}': () => ({}),
  });
  const screen = await mount(DeskTenants, {}, 'admin');
  await waitFor(() => $$('tr[data-tenant]', screen).length === 2 && $$('li[data-meter]', screen).length === 2, 'the tenants and meters');
  assert.equal(text($('tr[data-tenant="1"] td.wrap', screen)), 'Hall 60%');
  assert.match(text($('li[data-meter="7"]', screen)), /by percentage: Bakery 60%; Landlord 40%/);
  assert.match(text($('li[data-meter="8"]', screen)), /not split: billed to nobody/);

  byText('button', 'Set the shares of Stairs', screen)!.click();
  await waitFor(() => $$('form[data-split-form="8"]', screen).length === 1, 'the split editor');
  await fill($('[aria-label="Share of Bakery"]', screen), '30');
  await fill($('[aria-label="Share of Office"]', screen), '50');
  assert.match(text($('[data-field="sum"]', screen)), /add up to 80\.00 %, not 100 % \(20\.00 % to place\)/);
  await fill($('[aria-label="Landlord\'s percent"]', screen), '20');
  assert.equal(text($('[data-field="sum"]', screen)), 'The shares add up to 100.00 %.');
  assert.equal(text($('[data-fraction="2"]', screen)), '50%');

  await fill(labelled('Split'), 'floor_area');
  assert.equal(text($('[data-field="sum"]', screen)), 'Tenants take 96%, the landlord keeps 4%.');
  await fill(labelled('Split'), 'percent');
  byText('button', 'Save the shares of Stairs', screen)!.click();
  await waitFor(() => text($('p.done', screen)) === 'The shares of Stairs are saved.', 'the split saved');
  assert.deepEqual(calls.find((c) => c.method === 'PUT')!.body, {
    method: 'percent',
    shares: [
      { tenantId: 1, value: 30 },
      { tenantId: 2, value: 50 },
    ],
    landlordValue: 20,
  });

  byText('button', 'Set the shares of Hall', screen)!.click();
  await waitFor(() => byText('button', 'Stop splitting Hall', screen), 'the stop button');
  assert.equal(($('[aria-label="Share of Bakery"]', screen) as HTMLInputElement).value, '60');
  byText('button', 'Stop splitting Hall', screen)!.click();
  await waitFor(() => text($('p.done', screen)) === 'Hall is no longer split.', 'the split stopped');
  assert.equal(calls.find((c) => c.method === 'DELETE')!.params.path?.meterId, 7);
});
