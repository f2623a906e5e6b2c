// The energy figures a report is built from: the interval store's once meters exist, else energy_daily (what PUT
// /api/energy/areas records per site day, for a site without meters).
import type { Db } from '../db/client.ts';
import type { EnergyFigures as MeteredFigures, PeriodFigures } from '../energy/figures.ts';
import { addDays, dayIntervals, daysBetween } from '../energy/calendar.ts';
import { SITE_TOTAL } from '../energy/service.ts';

export type { PeriodFigures };

/** How much of a period holds data: the share of its 15-minute intervals (metered) or days (hand-entered), and the days with any. */
export type Coverage = { share: number; unit: 'intervals' | 'days'; days: string[] };
/** The site's mean demand per 15 minutes over one site day (null where an interval has no data). */
export type LoadCurve = { day: string; points: { at: string; kw: number | null }[] };

export type EnergyFigures = {
  periodFigures(from: string, to: string): PeriodFigures;
  coverage(from: string, to: string): Coverage;
  loadCurve(day: string): LoadCurve | null;
};

const round = (value: number, places: number) => Math.round(value * 10 ** places) / 10 ** places;

/** Every day of [from, to) with the site total (0 where nothing was recorded) and each area's sum; no power history, so no peak. */
export function dailyEnergyFigures(db: Db): EnergyFigures {
  const config = db.sqlite.prepare('SELECT timezone, currency, electricity_price AS price, carbon_factor AS factor FROM platform_config WHERE id = 1');
  const totals = db.sqlite.prepare(`SELECT day, kwh FROM energy_daily WHERE area = '${SITE_TOTAL}' AND day >= ? AND day < ?`).raw();
  const areas = db.sqlite
    .prepare(`SELECT area, SUM(kwh) FROM energy_daily WHERE area <> '${SITE_TOTAL}' AND day >= ? AND day < ? GROUP BY area ORDER BY area COLLATE NOCASE`)
    .raw();
  const recordedDays = db.sqlite.prepare(`SELECT day FROM energy_daily WHERE area = '${SITE_TOTAL}' AND day >= ? AND day < ? ORDER BY day`).pluck();
  return {
    coverage(from, to) {
      const days = recordedDays.all(from, to) as string[];
      const count = daysBetween(from, to).length;
      return { share: count ? days.length / count : 0, unit: 'days', days };
    },
    loadCurve: () => null,
    periodFigures(from, to) {
      const { timezone, currency, price, factor } = config.get() as { timezone: string; currency: string; price: number; factor: number };
      const figures = (kwh: number) => ({ kwh: round(kwh, 3), cost: round(kwh * price, 2), carbonKg: round(kwh * factor, 3) });
      const byDay = new Map((totals.all(from, to) as [string, number][]).map(([day, kwh]) => [day, kwh]));
      const days: PeriodFigures['days'] = [];
      // A day with no recorded total is no data (null), never 0 (issue 22).
      for (let day = from; day < to; day = addDays(day, 1)) {
        const kwh = byDay.get(day);
        days.push(kwh === undefined ? { day, kwh: null, cost: null, carbonKg: null } : { day, ...figures(kwh) });
      }
      const total = figures(days.reduce((sum, day) => sum + (byDay.get(day.day) ?? 0), 0));
      return {
        from,
        to,
        timezone,
        currency,
        totalKwh: total.kwh,
        cost: total.cost,
        carbonKg: total.carbonKg,
        days,
        areas: (areas.all(from, to) as [string, number][]).map(([area, kwh]) => ({ area, ...figures(kwh) })),
        peak: null,
      };
    },
  };
}

/** The metered figures (the same the energy API answers) when any meter exists, else the hand-entered daily totals. */
export function siteEnergyFigures(db: Db, metered: MeteredFigures): EnergyFigures {
  const daily = dailyEnergyFigures(db);
  return {
    periodFigures: (from, to) => (metered.metered() ? metered.periodFigures(from, to) : daily.periodFigures(from, to)),
    coverage: (from, to) => (metered.metered() ? meteredCoverage(metered, from, to) : daily.coverage(from, to)),
    loadCurve: (day) => (metered.metered() ? meteredLoadCurve(metered, day) : null),
  };
}

/** The site's intervals with data over [from, to) (every site meter must have the interval for it to count). */
function meteredCoverage(metered: MeteredFigures, from: string, to: string): Coverage {
  const { kwh } = metered.intervals(from, to);
  const { timezone } = metered.settings();
  const days: string[] = [];
  let recorded = 0;
  let offset = 0;
  for (const day of daysBetween(from, to)) {
    const { count } = dayIntervals(timezone, day);
    let inDay = 0;
    for (let i = offset; i < offset + count && i < kwh.length; i += 1) if (!Number.isNaN(kwh[i])) inDay += 1;
    if (inDay > 0) days.push(day);
    recorded += inDay;
    offset += count;
  }
  return { share: kwh.length ? recorded / kwh.length : 0, unit: 'intervals', days };
}

const INTERVALS_PER_HOUR = 4;

function meteredLoadCurve(metered: MeteredFigures, day: string): LoadCurve | null {
  const points = metered.series(day, addDays(day, 1), '15min');
  if (!points.some((point) => point.kwh !== null)) return null;
  return {
    day,
    points: points.map((point) => ({ at: point.start, kw: point.kwh === null ? null : Math.round(point.kwh * INTERVALS_PER_HOUR * 1000) / 1000 })),
  };
}
