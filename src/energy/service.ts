// Per-area energy cards, replaced as a set; each replace also records today's totals in energy_daily for the weekly chart.
import type { AuditLog } from '../audit/service.ts';
import type { Db } from '../db/client.ts';
import { Kept } from '../db/kept.ts';
import { BadRequest, type ErrorDetail } from '../http/errors.ts';
import type { AuthUser } from '../http/route.ts';
import { FIGURE_TABLES, type EnergyFigures } from './figures.ts';
import type { EnergyAreaInputValue, EnergyAreaView } from './schemas.ts';

/** energy_daily.area of the whole site; no area card may use the name. */
export const SITE_TOTAL = 'total';

import { addDays, siteDay } from './calendar.ts';

function round(value: number): number {
  return Math.round(value * 1000) / 1000;
}

const AREA_COLUMNS = `id, name, today_kwh AS todayKwh, month_kwh AS monthKwh, year_kwh AS yearKwh, power_kw AS powerKw,
  created_at AS createdAt, updated_at AS updatedAt`;

export class EnergyService {
  private readonly all;
  private readonly timezone;
  private readonly upsertArea;
  private readonly removeOthers;
  private readonly upsertDaily;
  private readonly removeOtherDaily;
  private readonly meteredNames;
  private readonly kept;
  private readonly keptUnallocated: Kept<{ todayKwh: number; monthKwh: number; yearKwh: number } | null>;

  constructor(
    private readonly db: Db,
    private readonly audit: AuditLog,
    private readonly figures?: EnergyFigures,
  ) {
    const sqlite = db.sqlite;
    this.all = sqlite.prepare(`SELECT ${AREA_COLUMNS} FROM energy_areas ORDER BY name COLLATE NOCASE, id`);
    this.meteredNames = sqlite.prepare('SELECT DISTINCT area FROM meters WHERE area IS NOT NULL').pluck();
    // The cards read the figures' tables, the hand-entered cards and the meters' last demand (src/db/kept.ts).
    this.kept = new Kept<EnergyAreaView[]>(sqlite, { name: 'energy.areaCards', tables: [...FIGURE_TABLES, 'energy_areas', 'meter_state'], max: 4 });
    this.keptUnallocated = new Kept(sqlite, { name: 'energy.unallocated', tables: FIGURE_TABLES, max: 4 });
    this.timezone = sqlite.prepare('SELECT timezone FROM platform_config WHERE id = 1').pluck();
    // Upsert by name keeps each card's id and createdAt across replaces.
    this.upsertArea = sqlite.prepare(
      `INSERT INTO energy_areas (name, today_kwh, month_kwh, year_kwh, power_kw, created_at, updated_at)
       VALUES (@name, @todayKwh, @monthKwh, @yearKwh, @powerKw, @now, @now)
       ON CONFLICT(name) DO UPDATE SET today_kwh = excluded.today_kwh, month_kwh = excluded.month_kwh,
         year_kwh = excluded.year_kwh, power_kw = excluded.power_kw, updated_at = excluded.updated_at`,
    );
    this.removeOthers = sqlite.prepare('DELETE FROM energy_areas WHERE name NOT IN (SELECT value FROM json_each(?))');
    this.upsertDaily = sqlite.prepare('INSERT INTO energy_daily (day, area, kwh) VALUES (?, ?, ?) ON CONFLICT(day, area) DO UPDATE SET kwh = excluded.kwh');
    this.removeOtherDaily = sqlite.prepare(
      `DELETE FROM energy_daily WHERE day = ? AND area <> '${SITE_TOTAL}' AND area NOT IN (SELECT value FROM json_each(?))`,
    );
  }

  /** Every card: an area with meters is computed from them (source `meters`), any other shows what PUT set (`manual`). */
  list(at: Date = new Date()): EnergyAreaView[] {
    // Kept until a table it reads is written, per site day and minute: powerKw is the demand the collector holds in
    // memory, which moves without a write.
    return this.kept.get(`${this.today(at)}|${Math.floor(at.getTime() / 60_000)}`, () => this.computeList(at));
  }

  private computeList(at: Date): EnergyAreaView[] {
    const rows = this.all.all() as Omit<EnergyAreaView, 'source'>[];
    const metered = new Set(this.meteredNames.all() as string[]);
    if (!this.figures || !metered.size) return rows.map((row) => ({ ...row, source: 'manual' as const }));
    const figures = this.figures;
    const today = figures.today(at);
    const month = `${today.slice(0, 7)}-01`;
    const year = `${today.slice(0, 4)}-01-01`;
    const tomorrow = addDays(today, 1);
    const [day, monthly, yearly] = [today, month, year].map((from) => figures.areaTotals(from, tomorrow));
    return rows.map((row) => {
      if (!metered.has(row.name)) return { ...row, source: 'manual' as const };
      return {
        ...row,
        todayKwh: round(day.get(row.name)?.kwh ?? 0),
        monthKwh: round(monthly.get(row.name)?.kwh ?? 0),
        yearKwh: round(yearly.get(row.name)?.kwh ?? 0),
        powerKw: round(figures.demandKw({ area: row.name })),
        source: 'meters' as const,
      };
    });
  }

  /**
   * The site's metered energy no area card accounts for (today, this month, this year): the site meters' total minus
   * every metered area's. Null while no meter is marked as a site meter (the site is then the sum of the areas).
   */
  unallocated(at: Date = new Date()): { todayKwh: number; monthKwh: number; yearKwh: number } | null {
    // Kept as the cards are (six figure lookups and their site-day reads cost ~0.1 ms a request at 500 meters).
    return this.keptUnallocated.get(this.today(at), () => this.computeUnallocated(at));
  }

  private computeUnallocated(at: Date): { todayKwh: number; monthKwh: number; yearKwh: number } | null {
    const figures = this.figures;
    if (!figures?.metered() || !figures.hasSiteMeters()) return null;
    const today = figures.today(at);
    const tomorrow = addDays(today, 1);
    const rest = (from: string) => {
      const site = figures.totals(from, tomorrow).kwh;
      let areas = 0;
      for (const totals of figures.areaTotals(from, tomorrow).values()) areas += totals.kwh;
      return round(site - areas);
    };
    return { todayKwh: rest(today), monthKwh: rest(`${today.slice(0, 7)}-01`), yearKwh: rest(`${today.slice(0, 4)}-01-01`) };
  }

  /** Today in the site's configured time zone. */
  today(at: Date = new Date()): string {
    return siteDay(this.timezone.get() as string, at);
  }

  /**
   * Replaces the whole set in one transaction. Today's energy_daily rows follow: one per area and the site
   * 'total' (the sum of todayKwh), overwritten by every replace, so the last report of a day is what the day keeps.
   */
  replace(actor: AuthUser, areas: EnergyAreaInputValue[]): EnergyAreaView[] {
    const details: ErrorDetail[] = [];
    const seen = new Map<string, number>();
    areas.forEach((area, index) => {
      const key = area.name.toLowerCase();
      if (key === SITE_TOTAL) details.push({ path: `body.areas.${index}.name`, message: `"${SITE_TOTAL}" is reserved for the site sum` });
      if (seen.has(key)) details.push({ path: `body.areas.${index}.name`, message: `duplicates areas.${seen.get(key)}.name (names are case-insensitive)` });
      seen.set(key, index);
      if (area.todayKwh > area.monthKwh) details.push({ path: `body.areas.${index}.todayKwh`, message: 'must not exceed monthKwh' });
      if (area.monthKwh > area.yearKwh) details.push({ path: `body.areas.${index}.monthKwh`, message: 'must not exceed yearKwh' });
    });
    if (details.length) throw new BadRequest('Invalid body', details);

    // Areas with meters are computed: listed ones are left as they are, unlisted ones are kept.
    const metered = new Set((this.meteredNames.all() as string[]).map((name) => name.toLowerCase()));
    areas = areas.filter((area) => !metered.has(area.name.toLowerCase()));
    const names = JSON.stringify([...areas.map((area) => area.name), ...(this.meteredNames.all() as string[])]);
    return this.db.sqlite.transaction(() => {
      const before = this.list();
      const now = new Date().toISOString();
      const day = this.today();
      this.removeOthers.run(names);
      for (const area of areas) {
        this.upsertArea.run({ ...area, now });
        this.upsertDaily.run(day, area.name, area.todayKwh);
      }
      this.removeOtherDaily.run(day, names);
      this.upsertDaily.run(day, SITE_TOTAL, round(areas.reduce((sum, area) => sum + area.todayKwh, 0)));
      const after = this.list();
      const summary = (list: Omit<EnergyAreaView, 'source'>[]) =>
        list.map(({ name, todayKwh, monthKwh, yearKwh, powerKw }) => ({ name, todayKwh, monthKwh, yearKwh, powerKw }));
      this.audit.record({ actor, action: 'replace', resource: 'energy_areas', before: summary(before), after: summary(after) });
      return after;
    })();
  }
}
