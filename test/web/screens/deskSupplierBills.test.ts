// The desk → supplier bills' entry form in the fast screen tier (written before the form was split into parts, issue 57
// item 3, to hold its behaviour; Chromium's desk.test.ts keeps the audit through the real API): the supply points are
// the site meters; a line without its amount and a negative rate are refused before asking, naming the line; lines
// added and removed; the bill sent as typed (the day after the last, a band only on energy, empty fields left out);
// the service's refusal shown in the form.
import './dom.ts';
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import type { Meter } from '../../../src/web/app/api/types.ts';
import DeskSupplierBills from '../../../src/web/app/screens/DeskSupplierBills.tsx';
import { $, $$, byText, calls, fill, labelled, mount, refuse, stubApi, text, unmount, waitFor } from './screen.ts';

after(unmount);

const meter = (id: number, name: string, site: boolean) => ({ id, name, site, area: null }) as Meter;
const line = (n: number, what: string) => $(`[aria-label="${what} of line ${n}"]`);

test('a bill entered by its printed lines: refusals naming the line, lines added and removed, the bill sent as typed', async () => {
  stubApi({
    'GET /api/billing/supplier-bills': () => ({ items: [], page: 1, pageSize: 50, total: 0 }),
    'GET /api/meters': () => ({ items: [meter(1, 'Sub-meter', false), meter(2, 'Grid supply', true)], page: 1, pageSize: 200, total: 2 }),
    'POST /api/billing/supplier-bills': () => refuse(409, 'A bill for this supply already covers 2026-01-01'),
  });
  const screen = await mount(DeskSupplierBills, {});
  await waitFor(() => $$('form[aria-labelledby="enter-bill-heading"]', screen).length === 1, 'the bill form');
  assert.deepEqual($$('option', labelled('Supply point (site meter)')).map(text), ['Grid supply']);
  assert.equal($$('[data-line-form]', screen).length, 2);
  await fill(labelled('First day'), '2026-01-01');
  await fill(labelled('Last day (included)'), '2026-01-31');
  byText('button', 'Enter and check', screen)!.click();
  await waitFor(() => text($('form p.problem', screen)) === 'Line 1 needs its amount.', 'the missing amount refused');

  await fill(line(1, 'Band'), 'peak');
  await fill(line(1, 'Quantity'), '1000');
  await fill(line(1, 'Unit rate'), '-0.2');
  await fill(line(1, 'Amount'), '200');
  await fill(line(2, 'Amount'), '30,50');
  byText('button', 'Enter and check', screen)!.click();
  await waitFor(() => /^Line 1: quantity and rate/.test(text($('form p.problem', screen))), 'the negative rate refused');
  await fill(line(1, 'Unit rate'), '0.2');

  byText('button', 'Add a line', screen)!.click();
  await waitFor(() => $$('[data-line-form]', screen).length === 3, 'a third line');
  await fill(line(3, 'Kind'), 'tax');
  await fill(line(3, 'Amount'), '5');
  byText('button', 'Remove line 2', screen)!.click();
  await waitFor(() => $$('[data-line-form]', screen).length === 2, 'the second line removed');
  assert.equal($$('[aria-label="Band of line 2"]', screen).length, 0, 'a tax line has no band');

  await fill(labelled('Total (EUR)'), '205');
  await fill(labelled('Meter reading at the end (optional)'), '5120');
  byText('button', 'Enter and check', screen)!.click();
  await waitFor(() => /already covers/.test(text($('form p.problem', screen))), "the service's refusal");
  assert.deepEqual(calls.find((c) => c.method === 'POST')!.body, {
    meterId: 2,
    from: '2026-01-01',
    to: '2026-02-01',
    lines: [
      { kind: 'energy', band: 'peak', quantity: 1000, rate: 0.2, amount: 200 },
      { kind: 'tax', amount: 5 },
    ],
    total: 205,
    endReading: 5120,
  });
});
