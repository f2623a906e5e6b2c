// Billing, read-only, in the fast screen tier (written before the screen was split into parts, issue 57 item 3, to
// hold its behaviour; Chromium's billing.test.ts keeps the downloads' bytes through the real API): the latest period's
// runs with each statement's total, the tenants and cost centres; a statement's file the service does not give says
// so; another period without runs says so.
import './dom.ts';
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import Billing from '../../../src/web/app/screens/Billing.tsx';
import { $, $$, byText, calls, fill, labelled, mount, refuse, stubApi, text, unmount, waitFor } from './screen.ts';

after(unmount);

const run = {
  id: 4,
  status: 'issued',
  kind: 'restatement',
  issuedAt: '2026-02-02T09:00:00.000Z',
  computedAt: '2026-02-01T09:00:00.000Z',
  summary: { currency: 'EUR' },
  statements: [
    { id: 21, tenantName: 'Bakery', totalCents: 41_250 },
    { id: 22, tenantName: 'Office', totalCents: 99_999 },
  ],
};

test("the latest period's runs with their statements, the tenants, a missing file said, a period without runs", async () => {
  stubApi({
    'GET /api/billing/tenants': () => ({
      items: [
        { id: 1, name: 'Bakery', kind: 'tenant', floorAreaM2: 120, contactEmail: 'shop@example.test' },
        { id: 2, name: 'Facilities', kind: 'cost_centre', floorAreaM2: 0, contactEmail: null },
      ],
    }),
    'GET /api/billing/periods': () => ({
      items: [
        { id: 1, name: 'January', from: '2026-01-01', to: '2026-02-01' },
        { id: 2, name: 'February', from: '2026-02-01', to: '2026-03-01' },
      ],
    }),
    'GET /api/billing/periods/{id}/runs': (call) => ({ items: call.params.path?.id === 2 ? [run] : [] }),
    'GET /api/billing/statements/{id}/pdf': () => refuse(404, 'not found'),
  });
  const screen = await mount(Billing, {}, 'viewer');
  await waitFor(() => $$('tr[data-statement]', screen).length === 2 && $$('tr[data-tenant]', screen).length === 2, 'the statements and tenants');
  assert.match(text($('article[data-run="4"] .row', screen)), /^Run 4\s*issued\s*restatement\s*issued /);
  assert.deepEqual($$('[data-field="total"]', screen).map(text), ['€412.50', '€999.99']);
  assert.deepEqual($$('tr[data-tenant] td:first-of-type', screen).map(text), ['tenant', 'cost centre']);
  assert.match(text($('tr[data-tenant="1"]', screen)), /shop@example\.test/);
  assert.match(text($('option', labelled('Billing period'))), /^January \(2026-01-01 – 2026-01-31\)$/);

  byText('button', 'PDF for Bakery', screen)!.click();
  await waitFor(() => text($('p.problem', screen)) === 'HTTP 404', 'the missing file said');
  assert.equal(calls.find((c) => c.path === '/api/billing/statements/{id}/pdf')!.params.path?.id, 21);

  await fill(labelled('Billing period'), '1');
  await waitFor(() => byText('p.muted', 'No run for this period yet.', screen), 'no runs said');
  assert.equal($$('article[data-run]', screen).length, 0);
});
