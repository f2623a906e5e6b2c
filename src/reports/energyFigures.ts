// The energy figures a report is built from: the interval store's once meters exist, else energy_daily (what PUT
// /api/energy/areas records per site day, for a site without meters).
import type { Db } from '../db/client.ts';
import type { EnergyFigures as MeteredFigures, PeriodFigures } from '../energy/figures.ts';
import { addDays } from '../energy/calendar.ts';
import { SITE_TOTAL } from '../energy/service.ts';

export type { PeriodFigures };

export type EnergyFigures = { periodFigures(from: string, to: string): PeriodFigures };

const round = (value: number, places: number) => Math.round(value * 10 ** places) / 10 ** places;

/** Every day of [from, to) with the site total (0 where nothing was recorded) and each area's sum; no power history, so no peak. */
export function dailyEnergyFigures(db: Db): EnergyFigures {
  const config = db.sqlite.prepare('SELECT timezone, currency, electricity_price AS price, carbon_factor AS factor FROM platform_config WHERE id = 1');
  const totals = db.sqlite.prepare(`SELECT day, kwh FROM energy_daily WHERE area = '${SITE_TOTAL}' AND day >= ? AND day < ?`).raw();
  const areas = db.sqlite.prepare(`SELECT area, SUM(kwh) FROM energy_daily WHERE area <> '${SITE_TOTAL}' AND day >= ? AND day < ? GROUP BY area ORDER BY area COLLATE NOCASE`).raw();
  return {
    periodFigures(from, to) {
      const { timezone, currency, price, factor } = config.get() as { timezone: string; currency: string; price: number; factor: number };
      const figures = (kwh: number) => ({ kwh: round(kwh, 3), cost: round(kwh * price, 2), carbonKg: round(kwh * factor, 3) });
      const byDay = new Map((totals.all(from, to) as [string, number][]).map(([day, kwh]) => [day, kwh]));
      const days: PeriodFigures['days'] = [];
      for (let day = from; day < to; day = addDays(day, 1)) days.push({ day, ...figures(byDay.get(day) ?? 0) });
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
  return { periodFigures: (from, to) => (metered.metered() ? metered.periodFigures(from, to) : daily.periodFigures(from, to)) };
}
