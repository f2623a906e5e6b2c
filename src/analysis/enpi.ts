// Energy performance indicators (ISO 50001 EnPIs) by month: kWh per m² of floor area, per degree day, and per unit of
// a production or occupancy figure entered per month; with the floor areas and monthly figures they divide by.
import { type EnergyFigures, nextMonth, type CommodityFigures } from '../energy/index.ts';
import type { StoredDays } from '../metering/index.ts';
import type { Actor, AuditLog } from '../platform/db/auditTrail.ts';
import { and, asc, eq, gte, lt, sql } from 'drizzle-orm';
import type { Db } from '../platform/db/client.ts';
import { areaFloorAreas, enpiDrivers } from '../platform/db/schema/index.ts';
import { siteSettings, type SiteSettings } from '../site/index.ts';
import { BadRequest } from '../platform/errors.ts';
import type { Target } from './comparisons.ts';
import { countDays } from './wholeDays.ts';
import { degreeDays, type OutdoorTemperatures } from './weather.ts';
import { round } from '../platform/numbers.ts';

export type FloorArea = { area: string; floorAreaM2: number };
export type Driver = { name: string; month: string; value: number; unit: string };

export class Enpis {
  private readonly floorAreas;
  private readonly upsertFloor;
  private readonly removeFloors;
  private readonly drivers;
  private readonly driverMonths;
  private readonly upsertDriver;
  /** The site's settings as site/ keeps them (its floor area: the site intensity per m²). */
  private readonly site: () => SiteSettings;

  constructor(
    private readonly db: Db,
    private readonly audit: AuditLog,
    private readonly figures: EnergyFigures,
    private readonly outdoor: OutdoorTemperatures,
    /** The whole site's energy over all fuels, for the site intensity (none: the site intensity is null). */
    private readonly commodities?: Pick<CommodityFigures, 'period'>,
    /** The target's days holding unconfirmed suspect intervals (metering's StoredDays): left out of a month's figures (issue 52). */
    private readonly days?: Pick<StoredDays, 'suspectPerDay'>,
  ) {
    const sqlite = db.sqlite;
    this.site = siteSettings(db);
    this.floorAreas = db.orm
      .select({ area: areaFloorAreas.area, floorAreaM2: areaFloorAreas.floorAreaM2 })
      .from(areaFloorAreas)
      .orderBy(asc(areaFloorAreas.area))
      .prepare();
    // An upsert per area, run for every area of a PUT in one transaction.
    this.upsertFloor = db.orm
      .insert(areaFloorAreas)
      .values({ area: sql.placeholder('area'), floorAreaM2: sql.placeholder('floorAreaM2'), updatedAt: sql.placeholder('now') })
      .onConflictDoUpdate({
        target: areaFloorAreas.area,
        set: { floorAreaM2: sql`excluded.floor_area_m2`, updatedAt: sql`excluded.updated_at` },
      })
      .prepare();
    // raw SQL: deletes every area not in the PUT's list, the list bound once as a json_each set
    this.removeFloors = sqlite.prepare('DELETE FROM area_floor_areas WHERE area NOT IN (SELECT value FROM json_each(?))');
    this.drivers = db.orm
      .select({ name: enpiDrivers.name, month: enpiDrivers.month, value: enpiDrivers.value, unit: enpiDrivers.unit })
      .from(enpiDrivers)
      .orderBy(asc(enpiDrivers.name), asc(enpiDrivers.month))
      .prepare();
    this.driverMonths = db.orm
      .select({ month: enpiDrivers.month, value: enpiDrivers.value, unit: enpiDrivers.unit })
      .from(enpiDrivers)
      .where(and(eq(enpiDrivers.name, sql.placeholder('name')), gte(enpiDrivers.month, sql.placeholder('from')), lt(enpiDrivers.month, sql.placeholder('to'))))
      .prepare();
    // An upsert per driver month.
    this.upsertDriver = db.orm
      .insert(enpiDrivers)
      .values({
        name: sql.placeholder('name'),
        month: sql.placeholder('month'),
        value: sql.placeholder('value'),
        unit: sql.placeholder('unit'),
        updatedAt: sql.placeholder('now'),
      })
      .onConflictDoUpdate({
        target: [enpiDrivers.name, enpiDrivers.month],
        set: { value: sql`excluded.value`, unit: sql`excluded.unit`, updatedAt: sql`excluded.updated_at` },
      })
      .prepare();
  }

  listFloorAreas(): FloorArea[] {
    return this.floorAreas.all();
  }

  /** Replaces the set of floor areas (an area not listed loses its figure), audited in the same transaction. */
  replaceFloorAreas(areas: FloorArea[], actor: Actor): FloorArea[] {
    const names = areas.map((a) => a.area);
    const duplicate = names.findIndex((name, i) => names.indexOf(name) !== i);
    if (duplicate >= 0) throw new BadRequest('Invalid body', [{ path: `body.areas.${duplicate}.area`, message: 'listed twice' }]);
    return this.db.sqlite.transaction(() => {
      const before = this.listFloorAreas();
      const now = new Date().toISOString();
      this.removeFloors.run(JSON.stringify(names));
      for (const area of areas) this.upsertFloor.run({ area: area.area, floorAreaM2: area.floorAreaM2, now });
      const after = this.listFloorAreas();
      this.audit.record({ actor, action: 'replace', resource: 'area_floor_areas', before, after });
      return after;
    })();
  }

  listDrivers(): Driver[] {
    return this.drivers.all();
  }

  /** Sets monthly figures of named drivers (units produced, occupied desk-days), audited. */
  setDrivers(values: Driver[], actor: Actor): Driver[] {
    return this.db.sqlite.transaction(() => {
      const now = new Date().toISOString();
      for (const value of values) this.upsertDriver.run({ ...value, now });
      this.audit.record({ actor, action: 'update', resource: 'enpi_drivers', before: null, after: values });
      return this.listDrivers();
    })();
  }

  /** Per month of [from, to): energy and each EnPI the data allow (null where a denominator is missing or 0). */
  async monthly(
    query: {
      target: Target;
      from: string;
      to: string;
      driver?: string;
      temperatureCode: string;
      heatingBaseC: number;
      coolingBaseC: number;
      anyTemperatureCode?: boolean;
    },
    now = Date.now(),
  ) {
    if (query.to <= query.from) throw new BadRequest('Invalid query', [{ path: 'query.to', message: 'must be after from' }]);
    const months: string[] = [];
    for (let m = query.from; m < query.to; m = nextMonth(m)) months.push(m);
    if (months.length > 120) throw new BadRequest('Invalid query', [{ path: 'query.to', message: 'at most 120 months' }]);
    const today = this.figures.today(new Date(now));
    const floors = this.listFloorAreas();
    // The site's floor area is every area's; an area's its own; a meter has none.
    const floorM2 =
      query.target.meterId !== undefined
        ? null
        : query.target.area !== undefined
          ? (floors.find((f) => f.area === query.target.area)?.floorAreaM2 ?? null)
          : floors.length
            ? floors.reduce((s, f) => s + f.floorAreaM2, 0)
            : null;
    const drivers = query.driver ? new Map(this.driverMonths.all({ name: query.driver, from: query.from, to: query.to }).map((d) => [d.month, d])) : new Map();
    const { days: temperatures } = await this.outdoor.days(query.temperatureCode, `${query.from}-01`, `${query.to}-01`, today, {
      anyCode: query.anyTemperatureCode,
    });
    // The site intensity: whole-site energy over all fuels per the site's own floor area (a site setting), site target only.
    const site = query.target.meterId === undefined && query.target.area === undefined;
    const siteFloorM2 = site ? this.site().floorAreaM2 : null;
    // The one whole-day rule (wholeDays.ts): an EnPI is the month's metered sum, so a partial day stays in it, and is
    // listed beside the figure (issue 52: a month with partial days reads low without saying why).
    const { partial } = countDays(
      this.figures,
      query.target,
      `${query.from}-01`,
      `${query.to < today.slice(0, 7) ? query.to : nextMonth(today.slice(0, 7))}-01`,
    );
    return {
      target: query.target,
      floorAreaM2: floorM2,
      siteFloorAreaM2: siteFloorM2,
      driver: query.driver ?? null,
      months: months.map((month) => {
        const monthFrom = `${month}-01`;
        const monthTo = `${nextMonth(month)}-01`;
        // A day holding a dead meter's flat zero is not a whole day: its energy and its degree days are left out, and
        // the intensities that need the whole month (per m², per driver unit) are withheld.
        const suspect = this.days?.suspectPerDay(JSON.stringify(this.figures.ids(query.target)), monthFrom, monthTo) ?? new Map<string, number>();
        let kwh = this.figures.totals(monthFrom, monthTo, query.target).kwh;
        if (suspect.size) {
          const byDay = this.figures.byDay(monthFrom, monthTo, query.target);
          for (const day of suspect.keys()) kwh -= byDay.get(day)?.kwh ?? 0;
        }
        let hdd = 0;
        let cdd = 0;
        let tempDays = 0;
        for (const [day, hourly] of temperatures) {
          if (!day.startsWith(month) || suspect.has(day)) continue;
          const dd = degreeDays(hourly, query.heatingBaseC, query.coolingBaseC);
          hdd += dd.hdd;
          cdd += dd.cdd;
          tempDays += 1;
        }
        const driver = drivers.get(month);
        const degree = hdd + cdd;
        const allFuels = site && this.commodities ? this.commodities.period(`${month}-01`, `${nextMonth(month)}-01`).energyKwh : null;
        return {
          month,
          kwh: round(kwh, 3),
          suspectDays: suspect.size,
          kwhPerM2: floorM2 && !suspect.size ? round(kwh / floorM2, 4) : null,
          hdd: round(hdd, 2),
          cdd: round(cdd, 2),
          temperatureDays: tempDays,
          partialDays: partial.filter((day) => day.startsWith(month)),
          kwhPerDegreeDay: degree > 0 ? round(kwh / degree, 3) : null,
          driverValue: driver?.value ?? null,
          driverUnit: driver?.unit ?? null,
          kwhPerDriverUnit: driver && driver.value > 0 && !suspect.size ? round(kwh / driver.value, 4) : null,
          siteEnergyKwh: allFuels,
          siteKwhPerM2: allFuels !== null && siteFloorM2 ? round(allFuels / siteFloorM2, 4) : null,
        };
      }),
    };
  }
}
