// Every energy figure, computed from the interval store: site and area totals, cost and carbon, the weekly chart,
// series at 15 minutes / hour / day / month, monthly peak demand, the report period and the raw CSV export.
import { siteSettings, type SiteSettings } from '../site/index.ts';
import type { IntervalStore, StoredDays } from '../metering/index.ts';
import type { Tariffs } from '../pricing/index.ts';
import type { Db } from '../platform/db/client.ts';
import { Kept } from '../platform/db/kept.ts';
import type { MeterTerm } from '../platform/db/schema/index.ts';
import { dayIntervals, daysBetween, INTERVAL_MS, siteDay } from '../platform/time/calendar.ts';
import { EnergyCompleteness, type DayCompleteness, type Shares } from './completeness.ts';
import { intervalPoints, maxReadings, meterCsv, type SeriesPoint } from './figureRows.ts';
import { highestInterval, type SitePeak, type SummedIntervals, sumMeterIntervals } from './intervalSums.ts';
import { round } from '../platform/numbers.ts';

export type PeriodFigures = {
  from: string;
  to: string;
  timezone: string;
  currency: string;
  totalKwh: number;
  cost: number;
  carbonKg: number;
  /** A day with no data at all (none of its intervals so far, or none yet) has null figures: no data is never zero. */
  days: ({ day: string; kwh: number | null; cost: number | null; carbonKg: number | null } & Partial<Shares>)[];
  areas: { area: string; kwh: number; cost: number; carbonKg: number }[];
  peak: { kw: number; at: string } | null;
  /** How much of the period's intervals (those that have happened) the site's figures rest on. */
  completeness?: Shares & { intervals: number };
};

export type Resolution = '15min' | 'hour' | 'day' | 'month';
export type { SeriesPoint } from './figureRows.ts';

export type Totals = { kwh: number; cost: number; carbonKg: number };

type MeterRow = {
  id: number;
  name: string;
  kind: string;
  area: string | null;
  site: number;
  terms: string;
  commodity: string;
  role: string;
};
/** Site and area energy count electricity drawn from the grid only: never m³, never export or generation (issue 26). */
const isGridImport = (row: { commodity: string; role: string }) => row.commodity === 'electricity' && row.role === 'import';
type Layout = { meters: MeterRow[]; site: number[]; areas: Map<string, number[]>; areaNames: readonly string[] };

/**
 * What the kept figures read: day and month rows, which meters make the site and each area, the tariffs (standing
 * charges), the site's time zone. Not meter_state: the collector's state writes change no kept figure.
 */
// meter_fold: where the month rollups end (a fold moves it; months are read as their rows plus the days after it).
// calorific_versions: the days the collector holds are priced when read (StoredDays adds them), gas at its calorific value.
export const FIGURE_TABLES = [
  'meter_days',
  'meter_months',
  'meter_fold',
  'meters',
  'tariff_versions',
  'platform_config',
  'calorific_versions',
  'meter_suspect_runs',
];
/** Figures kept at most (least recently used dropped first). */
const KEPT_FIGURES = 1000;
const HOUR_INTERVALS = 3_600_000 / INTERVAL_MS;

export class EnergyFigures {
  private readonly meterRows;
  private readonly config: () => SiteSettings;
  private readonly completenessOf: EnergyCompleteness;
  /** Totals, area totals, days and completeness, kept until a table they read is written (the store writes once an interval). */
  private readonly memo: Kept<unknown>;
  /** Which meters make the site and each area; kept until meters are written. */
  private readonly keptLayout: Kept<Layout>;
  /** Each meter's last demand, kept until the collector writes its states (or a meter changes). */
  private readonly keptDemand: Kept<Map<number, number>>;

  constructor(
    db: Db,
    private readonly tariffs: Tariffs,
    /** Metering's reader of the stored day and month rows (built once, with the store). */
    private readonly days: StoredDays,
    /** The interval store: what its collector holds in memory, not yet written, overlays the stored rows. */
    private readonly store?: Pick<IntervalStore, 'open'>,
  ) {
    const sqlite = db.sqlite;
    this.memo = new Kept(sqlite, { name: 'energy.figures', tables: FIGURE_TABLES, max: KEPT_FIGURES });
    this.keptLayout = new Kept(sqlite, { name: 'energy.layout', tables: ['meters'], max: 1 });
    this.keptDemand = new Kept(sqlite, { name: 'energy.demand', tables: ['meters', 'meter_state'], max: 1 });
    // raw SQL: the meter list for the figures' layout, read as plain rows (terms parsed where used), kept in energy.layout
    this.meterRows = sqlite.prepare('SELECT id, name, kind, area, site, terms, commodity, role FROM meters ORDER BY id');
    this.config = siteSettings(db);
    this.completenessOf = new EnergyCompleteness(days, () => this.store?.open);
  }

  /** Per site day in [from, to): the shares of the intervals so far that are measured, estimated and missing for the target. */
  completeness(from: string, to: string, target: { meterId?: number; area?: string } = {}): DayCompleteness[] {
    // Now is part of the key: an interval that has just happened counts from then on.
    const minute = Math.floor(Date.now() / 60_000);
    return this.remember(`completeness|${from}|${to}|${target.meterId ?? ''}|${target.area ?? ''}|${minute}`, () =>
      this.completenessOf.byDay(this.ids(target), from, to, this.settings().timezone),
    );
  }

  /** The target's whole and partial days of [from, to) (the whole-day rule of analysis/wholeDays.ts), kept like completeness. */
  wholeDays(from: string, to: string, target: { meterId?: number; area?: string } = {}): { whole: Set<string>; partial: string[] } {
    const minute = Math.floor(Date.now() / 60_000);
    return this.remember(`wholeDays|${from}|${to}|${target.meterId ?? ''}|${target.area ?? ''}|${minute}`, () =>
      this.completenessOf.wholeDays(this.ids(target), from, to, this.settings().timezone),
    );
  }

  completenessTotal(days: DayCompleteness[]): Shares & { intervals: number } {
    return this.completenessOf.total(days);
  }

  /** True when meters are marked as the site's (else the site is the sum of the areas, and nothing is unallocated). */
  hasSiteMeters(): boolean {
    return this.layout().meters.some((meter) => meter.site);
  }

  /** Meters with their names, for per-meter listings. */
  meterList(): { id: number; name: string; kind: string }[] {
    return this.layout().meters.map(({ id, name, kind }) => ({ id, name, kind }));
  }

  /** True once any meter exists: figures then come from meters, not from the hand-entered area cards. */
  metered(): boolean {
    // The kept layout (every meter row): asked several times per request, a statement each time cost ~17 µs.
    return this.layout().meters.length > 0;
  }

  settings(): { timezone: string; currency: string } {
    return this.config();
  }

  /** A computed figure, kept until a table it reads is written; what depends on the clock carries the day or minute in its name. */
  private remember<T>(name: string, compute: () => T): T {
    return this.memo.get(name, compute) as T;
  }

  /** Which meters make the site and each area; rebuilt only after a write to meters. */
  private layout(): Layout {
    return this.keptLayout.get('layout', () => layoutOf(this.meterRows.all() as MeterRow[]));
  }

  /** Each meter's last demand (kW) as stored; a virtual meter's from its terms once all of them have one. */
  private demand(): Map<number, number> {
    return this.keptDemand.get('demand', () => this.readDemand());
  }

  private readDemand(): Map<number, number> {
    const rows = this.layout().meters;
    const demand = new Map(this.days.demands());
    for (const row of rows) {
      if (row.kind !== 'virtual') continue;
      const terms = JSON.parse(row.terms) as MeterTerm[];
      if (terms.every((term) => demand.has(term.meterId)))
        demand.set(
          row.id,
          terms.reduce((sum, term) => sum + term.sign * demand.get(term.meterId)!, 0),
        );
    }
    return demand;
  }

  /** The meters a target sums: the one meter, the area's meters, or the site's. */
  ids(target: { meterId?: number; area?: string } = {}): number[] {
    const layout = this.layout();
    if (target.meterId !== undefined) return layout.meters.some((meter) => meter.id === target.meterId) ? [target.meterId] : [];
    if (target.area !== undefined) return layout.areas.get(target.area) ?? [];
    return layout.site;
  }

  /** Energy, cost and carbon per site day in [from, to); a day without data is absent. The site adds its standing charge. */
  /** Every day of [from, to) in order: its totals, or null when no meter of the target recorded an interval that day (no data, not 0). */
  byDay(from: string, to: string, target: { meterId?: number; area?: string } = {}): Map<string, Totals | null> {
    return this.remember(`days|${from}|${to}|${target.meterId ?? ''}|${target.area ?? ''}`, () => this.computeByDay(from, to, target));
  }

  private computeByDay(from: string, to: string, target: { meterId?: number; area?: string }): Map<string, Totals | null> {
    const rows = this.days.rollupsByDay(JSON.stringify(this.ids(target)), from, to);
    const site = target.meterId === undefined && target.area === undefined;
    // A day row whose intervals are all missing (only flags: a refused or bad reading) records nothing either.
    const stored = new Map(rows.filter((row) => row.recorded > 0).map((row) => [row.day, row]));
    return new Map(
      daysBetween(from, to).map((day) => {
        const row = stored.get(day);
        return [day, row ? { kwh: row.kwh, cost: row.cost + (site ? this.tariffs.versionOn(day).standingChargePerDay : 0), carbonKg: row.carbonKg } : null];
      }),
    );
  }

  /** Totals over [from, to) site days. Whole months are read from the month rollups. */
  totals(from: string, to: string, target: { meterId?: number; area?: string } = {}): Totals {
    // "to past today" decides how months are read: the wall-clock day is part of the key.
    return this.remember(`totals|${from}|${to}|${target.meterId ?? ''}|${target.area ?? ''}|${this.today()}`, () => ({
      ...this.computeTotals(from, to, target),
    }));
  }

  private computeTotals(from: string, to: string, target: { meterId?: number; area?: string }): Totals {
    const sum: Totals = { kwh: 0, cost: 0, carbonKg: 0 };
    const add = (totals: Totals) => {
      sum.kwh += totals.kwh;
      sum.cost += totals.cost;
      sum.carbonKg += totals.carbonKg;
    };
    // Whole months inside the range from the month rollups, the ragged ends by day.
    const firstWhole = from.slice(8) === '01' ? from.slice(0, 7) : nextMonth(from.slice(0, 7));
    const lastWhole = this.lastWholeMonth(to);
    if (firstWhole < lastWhole) {
      const ids = JSON.stringify(this.ids(target));
      for (const row of this.days.rollupsByMonth(ids, firstWhole, lastWhole)) add(row);
      if (target.meterId === undefined && target.area === undefined) {
        // One rule with byDay (issue 41): a standing charge for each site day with data, none for a day without (a
        // period with no data costs nothing, not its standing charges; today and the days to come count once they have data).
        const end = `${lastWhole}-01` < to ? `${lastWhole}-01` : to;
        for (const day of this.days.daysWithData(ids, `${firstWhole}-01`, end)) sum.cost += this.tariffs.versionOn(day).standingChargePerDay;
      }
      for (const totals of this.byDay(from, `${firstWhole}-01`, target).values()) if (totals) add(totals);
      if (`${lastWhole}-01` < to) for (const totals of this.byDay(`${lastWhole}-01`, to, target).values()) if (totals) add(totals);
    } else {
      for (const totals of this.byDay(from, to, target).values()) if (totals) add(totals);
    }
    return sum;
  }

  /** Every area's totals over [from, to) site days in one grouped read per part (whole months from the rollups). */
  areaTotals(from: string, to: string): Map<string, Totals> {
    return this.remember(`areas|${from}|${to}|${this.today()}`, () => this.computeAreaTotals(from, to));
  }

  private computeAreaTotals(from: string, to: string): Map<string, Totals> {
    const totals = new Map<string, Totals>();
    const add = (rows: ({ area: string } & Totals)[]) => {
      for (const row of rows) {
        const sum = totals.get(row.area) ?? { kwh: 0, cost: 0, carbonKg: 0 };
        totals.set(row.area, { kwh: sum.kwh + row.kwh, cost: sum.cost + row.cost, carbonKg: sum.carbonKg + row.carbonKg });
      }
    };
    const firstWhole = from.slice(8) === '01' ? from.slice(0, 7) : nextMonth(from.slice(0, 7));
    const lastWhole = this.lastWholeMonth(to);
    if (firstWhole < lastWhole) {
      add(this.days.areaRollupsByMonths(firstWhole, lastWhole));
      add(this.days.areaRollupsByDays(from, `${firstWhole}-01`));
      if (`${lastWhole}-01` < to) add(this.days.areaRollupsByDays(`${lastWhole}-01`, to));
    } else add(this.days.areaRollupsByDays(from, to));
    return totals;
  }

  /**
   * Where the whole-month rollups stop for a range ending at `to`: at to's month, or after it when `to` lies past today
   * (no day after today holds data, so this month's rollup is its month-to-date: cards read one row per meter, not 30).
   */
  private lastWholeMonth(to: string): string {
    const month = to.slice(0, 7);
    if (to.slice(8) === '01') return month;
    const today = siteDay(this.settings().timezone, new Date());
    return to > today && today.slice(0, 7) === month ? nextMonth(month) : month;
  }

  /** Current demand (kW) of the site or an area: power meters' last readings, energy meters' mean over their last two. */
  demandKw(target: { area?: string } = {}): number {
    const demand = this.demand();
    const open = this.store?.open;
    return this.ids(target).reduce((sum, id) => sum + (open?.demandKw(id) ?? demand.get(id) ?? 0), 0);
  }

  /** Sorted once per layout (a locale-aware sort on every request cost more than the kept comparison it guarded). */
  areaNames(): readonly string[] {
    return this.layout().areaNames;
  }

  /** Each 15-minute interval's kWh over [from, to) days for the target, summed over its meters (null where any has none). */
  intervals(from: string, to: string, target: { meterId?: number; area?: string } = {}): { start: number; kwh: Float64Array } {
    const { start, sums, seen, meters } = this.summedIntervals(from, to, target);
    // An interval counts only when every meter of the target has data for it.
    const kwh = new Float64Array(sums.length);
    for (let i = 0; i < sums.length; i += 1) kwh[i] = meters && seen[i] === meters ? sums[i] : NaN;
    return { start, kwh };
  }

  /**
   * Each interval's kWh summed over the meters that have it (NaN where none has), and how many of the target's meters
   * have it: what demand is read from, where a missing interval on one incomer must not hide the others' demand.
   */
  summedIntervals(from: string, to: string, target: { meterId?: number; area?: string } = {}): SummedIntervals {
    return sumMeterIntervals(this.days, this.store?.open, this.settings().timezone, this.ids(target), from, to);
  }

  /** A series for a meter, an area or the site over [from, to) site days. */
  series(from: string, to: string, resolution: Resolution, target: { meterId?: number; area?: string } = {}): SeriesPoint[] {
    const { timezone } = this.settings();
    // A gas, water, heat, export or PV meter's stored cost is at the electricity import tariff: not its cost (issue 26).
    const row = target.meterId === undefined ? undefined : this.layout().meters.find((meter) => meter.id === target.meterId);
    const priced = !row || isGridImport(row);
    if (resolution === 'day') {
      const byDay = this.byDay(from, to, target);
      const complete = this.completeness(from, to, target);
      return daysBetween(from, to).map((day, i) => {
        const totals = byDay.get(day);
        return {
          start: new Date(dayIntervals(timezone, day).start).toISOString(),
          kwh: totals ? round(totals.kwh, 3) : null,
          cost: totals && priced ? round(totals.cost, 2) : null,
          missing: complete[i].missing,
          estimated: complete[i].estimated,
        };
      });
    }
    if (resolution === 'month') {
      const points: SeriesPoint[] = [];
      for (let month = from.slice(0, 7); `${month}-01` < to; month = nextMonth(month)) {
        const first = `${month}-01` < from ? from : `${month}-01`;
        const last = `${nextMonth(month)}-01` > to ? to : `${nextMonth(month)}-01`;
        const totals = this.totals(first, last, target);
        const complete = this.completenessOf.total(this.completeness(first, last, target));
        // A month with no data at all is no data, not zero.
        const none = complete.intervals > 0 && complete.missing === 1;
        points.push({
          start: new Date(dayIntervals(timezone, first).start).toISOString(),
          kwh: none ? null : round(totals.kwh, 3),
          cost: none || !priced ? null : round(totals.cost, 2),
          missing: complete.missing,
          estimated: complete.estimated,
        });
      }
      return points;
    }
    const { start, kwh } = this.intervals(from, to, target);
    const step = resolution === 'hour' ? HOUR_INTERVALS : 1;
    // A power meter's highest reading per interval beside its mean (15-minute points of one meter).
    const maxKw = resolution === '15min' && target.meterId !== undefined ? maxReadings(this.days, timezone, target.meterId, from, to, start, kwh.length) : null;
    return intervalPoints(start, kwh, step, maxKw);
  }

  /** The month's highest 15-minute mean demand per meter and for the site, with when it happened. */
  peaks(month: string): { month: string; site: { kw: number; at: string } | null; meters: { meterId: number; name: string; kw: number; at: string }[] } {
    const layout = this.layout();
    // Demand peaks are drawn electricity's: a gas or water meter's m³ per interval is no kW, and a PV or export meter's
    // "peak" is no demand (issue 41).
    const names = new Map(layout.meters.filter(isGridImport).map((meter) => [meter.id, meter.name]));
    const rows = this.days.monthPeaks(month);
    const meters = rows
      .filter((row) => names.has(row.meterId))
      .map((row) => ({ meterId: row.meterId, name: names.get(row.meterId)!, kw: round(row.kw, 3), at: new Date(row.at).toISOString() }))
      .sort((a, b) => b.kw - a.kw);
    return { month, site: this.sitePeak(`${month}-01`, `${nextMonth(month)}-01`), meters };
  }

  /**
   * The site's highest 15-minute mean over [from, to), from the site meters' summed intervals. An interval one site
   * meter lacks still counts with what the others measured (a missing interval on one incomer must not remove the
   * other's demand): the peak is then a floor, and says so. `incompleteIntervals`: intervals that some but not all
   * site meters have; `complete`: none, and the peak's own interval has every meter.
   */
  sitePeak(from: string, to: string): SitePeak | null {
    return highestInterval(this.summedIntervals(from, to));
  }

  /** What a report shows for [from, to): the same figures the energy API answers. */
  periodFigures(from: string, to: string): PeriodFigures {
    const { timezone, currency } = this.settings();
    const byDay = this.byDay(from, to);
    const complete = this.completeness(from, to);
    const days = daysBetween(from, to).map((day, i) => {
      const totals = byDay.get(day);
      const { measured, estimated, missing, suspect, intervals } = complete[i];
      // Nothing stored, or every interval so far missing: unknown, not 0 (the sums over the period count it as nothing).
      if (!totals || missing === 1 || intervals === 0) return { day, kwh: null, cost: null, carbonKg: null, measured, estimated, missing, suspect };
      return { day, kwh: round(totals.kwh, 3), cost: round(totals.cost, 2), carbonKg: round(totals.carbonKg, 3), measured, estimated, missing, suspect };
    });
    const total = [...byDay.values()].reduce<Totals>(
      (sum, t) => (t ? { kwh: sum.kwh + t.kwh, cost: sum.cost + t.cost, carbonKg: sum.carbonKg + t.carbonKg } : sum),
      { kwh: 0, cost: 0, carbonKg: 0 },
    );
    const byArea = this.areaTotals(from, to);
    const areas = this.areaNames().map((area) => {
      const totals = byArea.get(area) ?? { kwh: 0, cost: 0, carbonKg: 0 };
      return { area, kwh: round(totals.kwh, 3), cost: round(totals.cost, 2), carbonKg: round(totals.carbonKg, 3) };
    });
    return {
      from,
      to,
      timezone,
      currency,
      totalKwh: round(total.kwh, 3),
      cost: round(total.cost, 2),
      carbonKg: round(total.carbonKg, 3),
      days,
      areas,
      peak: this.sitePeak(from, to),
      completeness: this.completenessOf.total(complete),
    };
  }

  /**
   * One meter's intervals as CSV lines, a day at a time: each day is one short read, so a year streams without holding
   * the range in memory or the database between chunks.
   */
  *csv(meterId: number, from: string, to: string): Generator<string> {
    yield* meterCsv(this.days, this.store, this.settings().timezone, meterId, from, to);
  }

  today(at: Date = new Date()): string {
    return siteDay(this.settings().timezone, at);
  }
}

export function nextMonth(month: string): string {
  const [y, m] = month.split('-').map(Number);
  return m === 12 ? `${String(y + 1).padStart(4, '0')}-01` : `${String(y).padStart(4, '0')}-${String(m + 1).padStart(2, '0')}`;
}

/** Which grid-import meters make each area, and the site (its flagged meters, else every area's). */
function layoutOf(rows: MeterRow[]): Layout {
  const areas = new Map<string, number[]>();
  for (const row of rows) {
    if (row.area === null || !isGridImport(row)) continue;
    let ids = areas.get(row.area);
    if (!ids) areas.set(row.area, (ids = []));
    ids.push(row.id);
  }
  const flagged = rows.filter((row) => row.site && isGridImport(row)).map((row) => row.id);
  const site = flagged.length ? flagged : [...areas.values()].flat();
  const areaNames = [...areas.keys()].sort((a, b) => a.localeCompare(b, undefined, { sensitivity: 'base' }));
  return { meters: rows, site, areas, areaNames };
}
