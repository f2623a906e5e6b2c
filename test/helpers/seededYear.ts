// A site with meters and 14 months of 15-minute data written through the real interval store (what a year of the
// collector leaves), areas named in several scripts, and one day in the last whole month without any data.
import { addDays, dayIntervals, siteDay } from '../../src/platform/time/calendar.ts';
import { FLAG_ESTIMATED } from '../../src/metering/store.ts';
import type { TestServer } from './server.ts';

export type SeededYear = { meterIds: number[]; siteId: number; areas: string[]; gapDay: string; lastMonth: { from: string; to: string } };

export const AREA_NAMES = ['Heizung / HVAC', 'Освещение', 'مبنى الإدارة 2', '数据中心'];

/** The previous whole month of the site's today (what a monthly plan run now reports). */
export function lastWholeMonth(timezone: string): { from: string; to: string } {
  const today = siteDay(timezone, new Date());
  const to = `${today.slice(0, 7)}-01`;
  const [y, m] = to.split('-').map(Number);
  return { from: m === 1 ? `${y - 1}-12-01` : `${y}-${String(m - 1).padStart(2, '0')}-01`, to };
}

/**
 * gaps: further days without any data (besides the one in the last whole month); estimated: days whose first
 * `intervals` intervals every meter stores flagged estimated (what the collector spreads over a gap).
 */
/**
 * What the seed writes for meter `m` (0: the main incomer) of `meters` in interval i of a day of `count` intervals: a
 * daily sine, a seasonal factor by month, 8 % more from `growthFrom` on; the main incomer is the sum of its
 * sub-meters plus a constant 6 kWh base. Exported for hand computations in the tests.
 */
export function seededKwh(day: string, i: number, count: number, m: number, meters: number, growthFrom: string): number {
  const seasonal = 1 + 0.25 * Math.cos(((Number(day.slice(5, 7)) - 1) / 12) * 2 * Math.PI);
  const growth = day >= growthFrom ? 1.08 : 1;
  const daily = 1 + 0.6 * Math.sin(((i - count / 4) / count) * 2 * Math.PI);
  if (m > 0) return Math.fround((2 + m) * daily * seasonal * growth);
  let sum = 6;
  for (let s = 1; s < meters; s += 1) sum += (2 + s) * daily * seasonal * growth;
  return Math.fround(sum);
}

export function seedYear(
  server: TestServer,
  timezone: string,
  options: { subMeters?: number; days?: number; gaps?: string[]; estimated?: { day: string; intervals: number }[] } = {},
): SeededYear {
  const { energy, db } = server.service.deps;
  const subMeters = options.subMeters ?? AREA_NAMES.length;
  const ids: number[] = [];
  db.sqlite.transaction(() => {
    ids.push(energy.meters.create({ name: 'Main incomer', code: 'meter.main.kwh', kind: 'energy', site: true }, null).id);
    for (let i = 0; i < subMeters; i += 1) {
      ids.push(
        energy.meters.create({ name: `Sub-meter ${i + 1}`, code: `meter.sub.${i + 1}.kwh`, kind: 'energy', area: AREA_NAMES[i % AREA_NAMES.length] }, null).id,
      );
    }
  })();
  const month = lastWholeMonth(timezone);
  const gapDay = addDays(month.from, 11);
  const today = siteDay(timezone, new Date());
  const first = addDays(month.from, -(options.days ?? 420));
  for (let day = first; day < today; day = addDays(day, 1)) {
    if (day === gapDay || options.gaps?.includes(day)) continue;
    const { start, count } = dayIntervals(timezone, day);
    db.sqlite.transaction(() => {
      energy.store.save(
        ids.map((meterId, m) => {
          const kwh = new Float32Array(count);
          for (let i = 0; i < count; i += 1) kwh[i] = seededKwh(day, i, count, m, ids.length, month.from);
          const flags = new Uint8Array(count);
          flags.fill(FLAG_ESTIMATED, 0, options.estimated?.find((e) => e.day === day)?.intervals ?? 0);
          return { meterId, day, start, kwh, flags, maxKw: null, stored: null };
        }),
      );
    })();
  }
  return { meterIds: ids.slice(1), siteId: ids[0], areas: AREA_NAMES.slice(0, subMeters), gapDay, lastMonth: month };
}
