// The overview in the fast screen tier (written before the screen was split into parts, issue 57 item 3, to hold its
// behaviour; Chromium's overview.test.ts keeps the live stream and the bytes through the real API): today's and the
// month's figures GET /api/dashboard gives, areas largest today first with the energy in no area, the utilities, a
// running peak warning (one that stayed below is not shown); live power from the stream replaces the dashboard's.
import './dom.ts';
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import type { Answer } from '../../../src/web/app/api/types.ts';
import Overview from '../../../src/web/app/screens/Overview.tsx';
import { livePower } from '../../../src/web/app/state/live.ts';
import { $, $$, mount, stubApi, text, unmount, waitFor } from './screen.ts';

after(unmount);

const area = (name: string, todayKwh: number, monthKwh: number) => ({
  name,
  todayKwh,
  monthKwh,
  powerKw: 3,
  yearKwh: 0,
  updatedAt: '2026-11-28T08:00:00.000Z',
});
const dashboard = {
  overview: {
    currency: 'EUR',
    energyTodayKwh: 412.5,
    energyMonthKwh: 9876,
    costToday: 98.1,
    costMonth: 2345.6,
    carbonTodayKg: 160,
    carbonMonthKg: 3900,
    powerKw: 42,
    activeAlerts: 3,
    criticalAlerts: 1,
    maintenanceDue: 2,
    maintenanceOverdue: 0,
    comparison: {
      complete: true,
      todayVsYesterdayPercent: 12.5,
      todayVsLastYearPercent: null,
      monthVsPreviousPercent: -4,
      monthVsPreviousWeatherNormalisedPercent: null,
    },
    commodities: [{ commodity: 'gas', quantity: 120, unit: 'm³', cost: 80, kwh: 1300 }],
  },
  areas: [area('Office', 20, 900), area('Hall', 150, 2000), area('Kitchen', 0, 50)],
  gateway: { state: 'up', checkedAt: null },
  weeklyEnergy: { days: [{ day: '2026-11-28', kwh: 400, measured: 0.96, missing: 0.04 }] },
} as unknown as Answer<'/api/dashboard'>;

test("today's and the month's figures, areas largest first with the rest, a running peak warning; live power replaces the dashboard's", async () => {
  livePower.value = null;
  stubApi({
    'GET /api/dashboard': () => dashboard,
    'GET /api/energy/areas': () => ({ areas: [], unallocated: { todayKwh: 7.5, monthKwh: 120 } }),
    'GET /api/analysis/peak-warnings': () => ({
      items: [
        {
          warnedAt: '2026-11-28T09:00:00.000Z',
          outcome: 'running',
          projectedKw: 510,
          limitKw: 480,
          windowStart: '',
          crossedAt: null,
          finalKw: null,
          leadSec: null,
        },
        {
          warnedAt: '2026-11-28T07:00:00.000Z',
          outcome: 'stayed below',
          projectedKw: 490,
          limitKw: 480,
          windowStart: '',
          crossedAt: null,
          finalKw: null,
          leadSec: null,
        },
      ],
    }),
  });
  const screen = await mount(Overview, {});
  await waitFor(() => $$('tr[data-area=""]', screen).length === 1 && $$('.notice.warn li', screen).length === 1, 'the figures, the rest and the warning');
  assert.equal($('[data-figure="today"] .num', screen).dataset.value, '412.5');
  assert.match(text($('[data-figure="today"] .changes', screen)), /12\.5\s*%\s*vs yesterday/);
  assert.match(text($('[data-figure="today"] .coverage', screen)), /96\s*% measured/);
  assert.deepEqual(
    $$('tr[data-area]', screen).map((tr) => tr.dataset.area),
    ['Hall', 'Office', 'Kitchen', ''],
  );
  assert.equal(text($('.notice.warn li', screen)), 'Projected 510.0 kW against a limit of 480.0 kW');
  assert.equal(text($('[data-field="activeAlerts"]', screen)), '3 active alerts (1 critical)');
  assert.match(text(screen), /Gas120.0 m³€80.00/);

  assert.equal($('[data-figure="power"] .num', screen).dataset.value, '42');
  livePower.value = { powerKw: 57.5, todayKwh: 420, day: '2026-11-28' };
  await waitFor(() => $('[data-figure="power"] .num', screen).dataset.value === '57.5', 'the live power');
  livePower.value = null;
});
