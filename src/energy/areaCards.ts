// The hand-entered area cards, replaced as a set; each replace also records today's totals in energy_daily for the weekly
// chart. An area with meters is listed with its meters' figures (SiteEnergy computes them) and is never written here.
// The cards' read (GET /api/energy/areas) is answered here whole: the cards and the site's unallocated energy, kept as one.
import { SITE_TOTAL, type MeterAreaCards, type MeterDirectory } from '../metering/index.ts';
import { siteTimezone } from '../site/index.ts';
import type { AuditLog } from '../platform/db/auditTrail.ts';
import type { Db } from '../platform/db/client.ts';
import { energyAreas, energyDaily } from '../platform/db/schema/index.ts';
import { and, between, eq, sql } from 'drizzle-orm';
import { Kept } from '../platform/db/kept.ts';
import { BadRequest, type ErrorDetail } from '../platform/errors.ts';
import type { AuthUser } from '../platform/http/route.ts';
import { FIGURE_TABLES } from './figures.ts';
import type { EnergyAreaInputValue, EnergyAreaView } from './schemas.ts';
import type { SiteEnergy, Unallocated } from './siteEnergy.ts';

import { siteDay } from '../platform/time/calendar.ts';
import { round } from '../platform/numbers.ts';

const AREA_COLUMNS = `id, name, today_kwh AS todayKwh, month_kwh AS monthKwh, year_kwh AS yearKwh, power_kw AS powerKw,
  created_at AS createdAt, updated_at AS updatedAt`;

/** What GET /api/energy/areas answers: every card, and the site's metered energy no metered area accounts for. */
export type AreaCardsView = { areas: EnergyAreaView[]; unallocated: Unallocated | null };

export class AreaCards {
  private readonly all;
  private readonly timezone;
  private readonly upsertArea;
  private readonly removeOthers;
  private readonly upsertDaily;
  private readonly removeOtherDaily;
  private readonly dailyOf;
  private readonly kept;

  constructor(
    private readonly db: Db,
    private readonly audit: AuditLog,
    /** The meters' areas: an area with meters is computed, never hand-entered. */
    private readonly meters: Pick<MeterDirectory, 'areaNames'>,
    /** The site's energy: a metered area's figures, and what no metered area accounts for. */
    private readonly site: Pick<SiteEnergy, 'meteredAreas' | 'unallocated'>,
  ) {
    const sqlite = db.sqlite;
    // raw SQL: the card columns (AREA_COLUMNS) and a NOCASE order, shared with the cards' other reads
    this.all = sqlite.prepare(`SELECT ${AREA_COLUMNS} FROM energy_areas ORDER BY name COLLATE NOCASE, id`);
    // The cards read the figures' tables, the hand-entered cards and the meters' last demand; the unallocated energy the
    // figures' tables (src/platform/db/kept.ts).
    this.kept = new Kept<AreaCardsView>(sqlite, { name: 'energy.areaCards', tables: [...FIGURE_TABLES, 'energy_areas', 'meter_state'], max: 4 });
    this.timezone = siteTimezone(db);
    this.dailyOf = db.orm
      .select({ day: energyDaily.day, kwh: energyDaily.kwh })
      .from(energyDaily)
      .where(and(eq(energyDaily.area, sql.placeholder('area')), between(energyDaily.day, sql.placeholder('from'), sql.placeholder('to'))))
      .prepare();
    // Upsert by name keeps each card's id and createdAt across replaces.
    // raw SQL: an upsert per card of a PUT (ON CONFLICT … excluded), in one transaction
    this.upsertArea = sqlite.prepare(
      `INSERT INTO energy_areas (name, today_kwh, month_kwh, year_kwh, power_kw, created_at, updated_at)
       VALUES (@name, @todayKwh, @monthKwh, @yearKwh, @powerKw, @now, @now)
       ON CONFLICT(name) DO UPDATE SET today_kwh = excluded.today_kwh, month_kwh = excluded.month_kwh,
         year_kwh = excluded.year_kwh, power_kw = excluded.power_kw, updated_at = excluded.updated_at`,
    );
    // raw SQL: deletes every card not in the PUT's list, the list bound once as a json_each set
    this.removeOthers = sqlite.prepare('DELETE FROM energy_areas WHERE name NOT IN (SELECT value FROM json_each(?))');
    // raw SQL: an upsert of a card's day (ON CONFLICT … excluded)
    this.upsertDaily = sqlite.prepare('INSERT INTO energy_daily (day, area, kwh) VALUES (?, ?, ?) ON CONFLICT(day, area) DO UPDATE SET kwh = excluded.kwh');
    // raw SQL: deletes the daily rows of cards not in the PUT's list, bound once as a json_each set
    this.removeOtherDaily = sqlite.prepare(
      `DELETE FROM energy_daily WHERE day = ? AND area <> '${SITE_TOTAL}' AND area NOT IN (SELECT value FROM json_each(?))`,
    );
  }

  /** A hand-entered card's daily kWh for the days of [from, to] (both included) that have one. */
  daily(area: string, from: string, to: string): { day: string; kwh: number }[] {
    return this.dailyOf.all({ area, from, to });
  }

  /**
   * The cards' whole read: every card (an area with meters is computed from them, source `meters`; any other shows what
   * PUT set, `manual`) and the site's unallocated energy. Kept until a table it reads is written, per site day and
   * minute: powerKw is the demand the collector holds in memory, which moves without a write. While kept it is the same
   * object, so the route sends its JSON again (reusesBody).
   */
  view(at: Date = new Date()): AreaCardsView {
    return this.kept.get(`${this.today(at)}|${Math.floor(at.getTime() / 60_000)}`, () => ({
      areas: this.computeList(at),
      unallocated: this.site.unallocated(at),
    }));
  }

  /** Every card, as view() lists them. */
  list(at: Date = new Date()): EnergyAreaView[] {
    return this.view(at).areas;
  }

  private computeList(at: Date): EnergyAreaView[] {
    const rows = this.all.all() as Omit<EnergyAreaView, 'source'>[];
    const metered = new Set(this.meters.areaNames());
    const figures = this.site.meteredAreas(
      rows.filter((row) => metered.has(row.name)).map((row) => row.name),
      at,
    );
    return rows.map((row) => {
      const computed = figures.get(row.name);
      return computed ? { ...row, ...computed, source: 'meters' as const } : { ...row, source: 'manual' as const };
    });
  }

  /** Today in the site's configured time zone. */
  today(at: Date = new Date()): string {
    return siteDay(this.timezone(), at);
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
    const meteredNames = this.meters.areaNames();
    const metered = new Set(meteredNames.map((name) => name.toLowerCase()));
    areas = areas.filter((area) => !metered.has(area.name.toLowerCase()));
    const names = JSON.stringify([...areas.map((area) => area.name), ...meteredNames]);
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
      this.upsertDaily.run(
        day,
        SITE_TOTAL,
        round(
          areas.reduce((sum, area) => sum + area.todayKwh, 0),
          3,
        ),
      );
      const after = this.list();
      const summary = (list: Omit<EnergyAreaView, 'source'>[]) =>
        list.map(({ name, todayKwh, monthKwh, yearKwh, powerKw }) => ({ name, todayKwh, monthKwh, yearKwh, powerKw }));
      this.audit.record({ actor, action: 'replace', resource: 'energy_areas', before: summary(before), after: summary(after) });
      return after;
    })();
  }
}

/** The hand-entered area cards' names, for facility's alarm areas (the port AreaSources; facility is built before energy). */
export function areaCardNames(db: Db): () => string[] {
  const names = db.orm.select({ name: energyAreas.name }).from(energyAreas).prepare();
  return () => names.all().map((row) => row.name);
}

/**
 * Metering's port MeterAreaCards over the cards (energy owns energy_areas; metering is built first, the root hands this
 * in): a meter's area gets its card row in the meter's own write transaction, and the card's spelling of an area name.
 */
export function meterAreaCards(db: Db): MeterAreaCards {
  // raw SQL: INSERT … ON CONFLICT DO NOTHING (the card may be there); runs in the meter write's transaction.
  const ensure = db.sqlite.prepare('INSERT INTO energy_areas (name, created_at, updated_at) VALUES (?, ?, ?) ON CONFLICT (name) DO NOTHING');
  // raw SQL: lower() on both sides; a spelling other than the one asked comes first.
  const spelling = db.sqlite.prepare('SELECT name FROM energy_areas WHERE lower(name) = lower(?) ORDER BY name = ? LIMIT 1').pluck();
  return {
    ensure: (name, now) => void ensure.run(name, now, now),
    spelling: (name) => spelling.get(name, name) as string | undefined,
  };
}
