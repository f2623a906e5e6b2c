// The site's energy, one view over its two sources: an area's figures come from its meters where it has them and from
// its hand-entered card (AreaCards, recorded per day in energy_daily) where not; the site's come from its meters once
// any meter exists, else from the sum of the cards. Callers ask here and never branch on where figures come from.
import { siteSettings } from '../site/index.ts';
import { SITE_TOTAL } from '../metering/index.ts';
import type { Db } from '../platform/db/client.ts';
import { addDays, dayIntervals, daysBetween, INTERVAL_MS, siteDay } from '../platform/time/calendar.ts';
import type { Shares } from './completeness.ts';
import type { EnergyFigures, PeriodFigures, Totals } from './figures.ts';
import { round } from '../platform/numbers.ts';

export type { PeriodFigures, Totals };

/** Where the site's figures come from: its meters once any meter exists, else the hand-entered area cards. */
export type EnergySource = 'meters' | 'cards';
/** The site's energy so far today and this month (cost and carbon at the tariff, or at the platform price for cards) and its current demand. */
export type SiteNow = { source: EnergySource; day: string; today: Totals; month: Totals; powerKw: number };
/** A metered area's energy today, this month and this year, and its current demand (kWh and kW, rounded as the cards show them). */
export type AreaFigures = { todayKwh: number; monthKwh: number; yearKwh: number; powerKw: number };
/** The site's metered energy no area accounts for, today, this month and this year (kWh). */
export type Unallocated = { todayKwh: number; monthKwh: number; yearKwh: number };
/** One site day: its energy (null: no data, never 0) and the shares of its intervals (cards: a day is recorded or not). */
export type DayEnergy = { day: string; kwh: number | null } & Shares;
/** How much of a period holds data: the share of its 15-minute intervals (metered) or days (hand-entered), and the days with any. */
export type Coverage = { share: number; unit: 'intervals' | 'days'; days: string[] };
/** The site's mean demand per 15 minutes over one site day (null where an interval has no data). */
export type LoadCurve = { day: string; points: { at: string; kw: number | null }[] };
/** What interval figures are asked for: the site ({}) or one area. */
export type EnergyTarget = { area?: string };

const INTERVALS_PER_HOUR = 4;

export class SiteEnergy {
  private readonly config;
  private readonly cardSums;
  private readonly dailyTotals;
  private readonly dailyAreas;
  private readonly recordedDays;

  /**
   * meters: the interval store's figures; without them (tests, the report benchmark) the site has only its cards.
   * consumption: what the site used in [from, to) (grid import − export + generation, src/energy/commodities.ts), null
   * when not known; the areas' meters are set against it, not against the grid import alone.
   */
  constructor(
    db: Db,
    private readonly meters?: EnergyFigures,
    private readonly consumption?: (from: string, to: string) => number | null,
  ) {
    // energy_daily and energy_areas are AreaCards' tables; the sums over them stay beside the meters' in src/energy.
    const sqlite = db.sqlite;
    this.config = siteSettings(db);
    // raw SQL: the cards' three sums in one statement (coalesce over an empty table)
    this.cardSums = sqlite.prepare(
      'SELECT coalesce(sum(today_kwh), 0) AS todayKwh, coalesce(sum(month_kwh), 0) AS monthKwh, coalesce(sum(power_kw), 0) AS powerKw FROM energy_areas',
    );
    // raw SQL: the site-total card's daily kWh of a range, as arrays
    this.dailyTotals = sqlite.prepare(`SELECT day, kwh FROM energy_daily WHERE area = '${SITE_TOTAL}' AND day >= ? AND day < ?`).raw();
    // raw SQL: per-area sums of the cards' days, ordered NOCASE, as arrays
    this.dailyAreas = sqlite
      .prepare(`SELECT area, SUM(kwh) FROM energy_daily WHERE area <> '${SITE_TOTAL}' AND day >= ? AND day < ? GROUP BY area ORDER BY area COLLATE NOCASE`)
      .raw();
    // raw SQL: the days the site-total card has, plucked
    this.recordedDays = sqlite.prepare(`SELECT day FROM energy_daily WHERE area = '${SITE_TOTAL}' AND day >= ? AND day < ? ORDER BY day`).pluck();
  }

  source(): EnergySource {
    return this.meters?.metered() ? 'meters' : 'cards';
  }

  timezone(): string {
    return this.config().timezone;
  }

  /** Today in the site's time zone. */
  today(at: Date = new Date()): string {
    return siteDay(this.timezone(), at);
  }

  /** The site today and this month, and its current demand. */
  now(at: Date = new Date()): SiteNow {
    const meters = this.meteredFigures();
    if (meters) {
      const day = meters.today(at);
      const tomorrow = addDays(day, 1);
      return {
        source: 'meters',
        day,
        today: meters.totals(day, tomorrow),
        month: meters.totals(`${day.slice(0, 7)}-01`, tomorrow),
        powerKw: meters.demandKw(),
      };
    }
    const { timezone, electricityPrice, carbonFactor } = this.config();
    const cards = this.cardSums.get() as { todayKwh: number; monthKwh: number; powerKw: number };
    const priced = (kwh: number): Totals => ({ kwh, cost: kwh * electricityPrice, carbonKg: kwh * carbonFactor });
    return { source: 'cards', day: siteDay(timezone, at), today: priced(cards.todayKwh), month: priced(cards.monthKwh), powerKw: cards.powerKw };
  }

  /** Each named area's figures from its meters (an area without electricity import meters has zeros); empty without meters. */
  meteredAreas(names: string[], at: Date = new Date()): Map<string, AreaFigures> {
    const meters = names.length ? this.meteredFigures() : undefined;
    if (!meters) return new Map();
    const today = meters.today(at);
    const tomorrow = addDays(today, 1);
    const [day, monthly, yearly] = [today, `${today.slice(0, 7)}-01`, `${today.slice(0, 4)}-01-01`].map((from) => meters.areaTotals(from, tomorrow));
    return new Map(
      names.map((name) => [
        name,
        {
          todayKwh: round(day.get(name)?.kwh ?? 0, 3),
          monthKwh: round(monthly.get(name)?.kwh ?? 0, 3),
          yearKwh: round(yearly.get(name)?.kwh ?? 0, 3),
          powerKw: round(meters.demandKw({ area: name }), 3),
        },
      ]),
    );
  }

  /**
   * The site's metered energy no area card accounts for (today, this month, this year): what the site used (its grid
   * import, plus the PV's output, less the export: the areas use the panels' output too, which the grid meter never
   * sees) minus every metered area's. Null while no meter is marked as a site meter (the site is then the sum of the areas).
   * Six figure lookups (~0.1 ms at 500 meters); not kept here: its one caller, the area cards' read, keeps it with the cards.
   */
  unallocated(at: Date = new Date()): Unallocated | null {
    const meters = this.meteredFigures();
    if (!meters?.hasSiteMeters()) return null;
    const today = meters.today(at);
    const tomorrow = addDays(today, 1);
    const rest = (from: string) => {
      const site = this.consumption?.(from, tomorrow) ?? meters.totals(from, tomorrow).kwh;
      let areas = 0;
      for (const totals of meters.areaTotals(from, tomorrow).values()) areas += totals.kwh;
      return round(site - areas, 3);
    };
    return { todayKwh: rest(today), monthKwh: rest(`${today.slice(0, 7)}-01`), yearKwh: rest(`${today.slice(0, 4)}-01-01`) };
  }

  /** The site's energy per day of [from, to) with each day's and the range's shares measured, estimated and missing. */
  days(from: string, to: string): { days: DayEnergy[]; completeness: Shares } {
    const meters = this.meteredFigures();
    if (meters) {
      const byDay = meters.byDay(from, to);
      const shares = meters.completeness(from, to);
      // As the summary's days: nothing stored, or every interval so far missing, is no data.
      const days = shares.map(({ day, intervals, measured, estimated, missing, suspect }) => {
        const totals = byDay.get(day);
        return { day, kwh: !totals || intervals === 0 || missing === 1 ? null : round(totals.kwh, 3), measured, estimated, missing, suspect };
      });
      const { measured, estimated, missing, suspect } = meters.completenessTotal(shares);
      return { days, completeness: { measured, estimated, missing, suspect } };
    }
    // Hand-entered totals: a day is recorded or not (its share is all measured or all missing).
    const recorded = new Map(this.dailyTotals.all(from, to) as [string, number][]);
    const days = daysBetween(from, to).map((day) => {
      const kwh = recorded.get(day);
      return kwh === undefined
        ? { day, kwh: null, measured: 0, estimated: 0, missing: 1, suspect: 0 }
        : { day, kwh: round(kwh, 3), measured: 1, estimated: 0, missing: 0, suspect: 0 };
    });
    const known = days.filter((d) => d.kwh !== null).length;
    const share = (part: number) => round(part / days.length, 4);
    return { days, completeness: { measured: share(known), estimated: 0, missing: share(days.length - known), suspect: 0 } };
  }

  /** What a report shows for [from, to): the figures the energy API answers, or every day of the hand-entered totals (no peak). */
  periodFigures(from: string, to: string): PeriodFigures {
    const meters = this.meteredFigures();
    if (meters) return meters.periodFigures(from, to);
    const { timezone, currency, electricityPrice, carbonFactor } = this.config();
    const figures = (kwh: number) => ({ kwh: round(kwh, 3), cost: round(kwh * electricityPrice, 2), carbonKg: round(kwh * carbonFactor, 3) });
    const byDay = new Map(this.dailyTotals.all(from, to) as [string, number][]);
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
      areas: (this.dailyAreas.all(from, to) as [string, number][]).map(([area, kwh]) => ({ area, ...figures(kwh) })),
      peak: null,
    };
  }

  /** The site's intervals with data over [from, to) (every site meter must have the interval for it to count), or its recorded days. */
  coverage(from: string, to: string): Coverage {
    const meters = this.meteredFigures();
    if (!meters) {
      const days = this.recordedDays.all(from, to) as string[];
      const count = daysBetween(from, to).length;
      return { share: count ? days.length / count : 0, unit: 'days', days };
    }
    const { kwh } = meters.intervals(from, to);
    const { timezone } = meters.settings();
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

  /** The site's 15-minute demand over one day; null without meters or without any interval that day. */
  loadCurve(day: string): LoadCurve | null {
    const meters = this.meteredFigures();
    if (!meters) return null;
    const points = meters.series(day, addDays(day, 1), '15min');
    if (!points.some((point) => point.kwh !== null)) return null;
    return {
      day,
      points: points.map((point) => ({ at: point.start, kw: point.kwh === null ? null : round(point.kwh * INTERVALS_PER_HOUR, 3) })),
    };
  }

  /** The targets that have 15-minute intervals: the site and each metered area (none on a site without meters). */
  intervalTargets(): EnergyTarget[] {
    const meters = this.meteredFigures();
    return meters ? [{}, ...meters.areaNames().map((area) => ({ area }))] : [];
  }

  /** Each 15-minute interval's kWh over [from, to) days for the site or an area (NaN where any of its meters has none). */
  intervals(from: string, to: string, target: EnergyTarget = {}): { start: number; kwh: Float64Array } {
    const meters = this.meteredFigures();
    if (meters) return meters.intervals(from, to, target);
    const timezone = this.timezone();
    const start = dayIntervals(timezone, from).start;
    const end = from < to ? dayIntervals(timezone, to).start : start;
    return { start, kwh: new Float64Array(Math.round((end - start) / INTERVAL_MS)).fill(Number.NaN) };
  }

  /**
   * How much of today's and this month's intervals so far the site's metered figures rest on (measured or estimated:
   * 1 − the missing share); null without meters (hand-entered cards) or before the period's first interval has ended.
   */
  headlineCoverage(at: Date = new Date()): { today: number | null; month: number | null } {
    const meters = this.meteredFigures();
    if (!meters) return { today: null, month: null };
    const day = meters.today(at);
    const tomorrow = addDays(day, 1);
    const share = (from: string) => {
      const total = meters.completenessTotal(meters.completeness(from, tomorrow));
      return total.intervals > 0 ? round(1 - total.missing, 4) : null;
    };
    return { today: share(day), month: share(`${day.slice(0, 7)}-01`) };
  }

  /** The meters' figures once any meter exists: the one place that asks which source answers. */
  private meteredFigures(): EnergyFigures | undefined {
    return this.meters?.metered() ? this.meters : undefined;
  }
}
