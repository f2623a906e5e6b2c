// The whole-day rule read from the stored rows' presence byte (EnergyFigures.wholeDays, issue 52's cost) answers what
// the rule over the decoded completeness answers, day by day: every meter complete (estimated intervals too), a meter
// without a row, one with half a day, two halves that never meet, an empty row, a day without rows, today so far.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { addDays, dayIntervals, siteDay } from '../../src/platform/time/calendar.ts';
import { FLAG_ESTIMATED } from '../../src/metering/store.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

let server: TestServer;
before(async () => {
  server = await startTestServer();
});
after(() => server.close());

test('whole and partial days from the presence byte equal the rule over the decoded intervals', async () => {
  const admin = await server.createUser({ role: 'admin' });
  const meter = async (name: string) => {
    const response = await server.request('POST', '/api/meters', {
      token: admin.accessToken,
      body: { name, code: `meter.${name.replace(' ', '')}.kwh`, kind: 'energy', area: 'Floors' },
    });
    assert.equal(response.status, 201, response.text);
    return response.body.id as number;
  };
  const a = await meter('Floor 1');
  const b = await meter('Floor 2');
  const { energy } = server.service.deps;
  const timezone = energy.figures.settings().timezone;
  const today = siteDay(timezone);
  const day = (offset: number) => addDays(today, offset);
  /** A row of `meterId` on `d` with values where `has(i)`; `flag(i)` its flags. */
  const row = (meterId: number, d: string, has: (i: number, count: number) => boolean, flag: (i: number) => number = () => 0) => {
    const { start, count } = dayIntervals(timezone, d);
    const kwh = Float64Array.from({ length: count }, (_, i) => (has(i, count) ? 1 + (i % 3) : NaN));
    return { meterId, day: d, start, kwh, flags: Uint8Array.from({ length: count }, (_, i) => flag(i)), maxKw: null };
  };
  const all = () => true;
  const firstHalf = (i: number, count: number) => i < count / 2;
  const secondHalf = (i: number, count: number) => i >= count / 2;
  const now = Date.now();
  energy.store.transaction(() =>
    energy.store.save([
      row(a, day(-8), all),
      row(b, day(-8), all), // whole
      row(a, day(-7), all), // b has no row: every interval missing for the area
      row(a, day(-6), all),
      row(b, day(-6), firstHalf), // partial
      row(a, day(-5), firstHalf),
      row(b, day(-5), secondHalf), // every interval lacks one meter: no data for the area
      row(a, day(-4), all, (i) => (i % 5 ? 0 : FLAG_ESTIMATED)),
      row(b, day(-4), all), // whole with estimated intervals
      row(a, day(-3), () => false),
      row(b, day(-3), all), // an empty row
      // day(-2): no rows
      row(a, day(-1), all),
      row(b, day(-1), all), // whole
      // today so far, its finished intervals (so never whole: at 23:54 the 23:45 interval is still running)
      row(a, today, (i) => dayIntervals(timezone, today).start + (i + 1) * 900_000 <= now),
      row(b, today, (i) => dayIntervals(timezone, today).start + (i + 1) * 900_000 <= now),
    ]),
  );
  const target = { area: 'Floors' };
  const from = day(-9);
  const to = day(1);
  // The rule as countDays read it before: the decoded completeness of every day.
  const reference = { whole: [] as string[], partial: [] as string[] };
  for (const d of energy.figures.completeness(from, to, target)) {
    if (d.intervals === 0 || d.missing === 1) continue;
    if (d.missing === 0 && d.intervals === dayIntervals(timezone, d.day).count) reference.whole.push(d.day);
    else reference.partial.push(d.day);
  }
  const fast = energy.figures.wholeDays(from, to, target);
  assert.deepEqual({ whole: [...fast.whole].sort(), partial: fast.partial }, reference);
  assert.deepEqual(reference.whole, [day(-8), day(-4), day(-1)]);
  assert.ok(reference.partial.includes(day(-6)));
});
