// The alarm point → area map (issue 45 item 11): which area a gateway alarm's alert is raised in. An admin's mapping
// (exact code, else the longest prefix) wins; else the meter of that code with an area; else the point's name in the
// gateway's catalogue when it starts with an area's name ("Server room temperature" → Server room); else no area.
import { and, asc, desc, eq, or, sql } from 'drizzle-orm';
import type { Actor, AuditLog } from '../../platform/db/auditTrail.ts';
import type { Db } from '../../platform/db/client.ts';
import { alarmAreas } from '../../platform/db/schema/index.ts';
import { BadRequest, type ErrorDetail } from '../../platform/errors.ts';
import type { AlarmAreaMappingValue, AlarmAreaMapView } from './schemas.ts';

/** Why an alert got its area, for the poller's log and the tests. */
export type AreaReason = 'mapped' | 'meter' | 'point name' | 'none';

/**
 * The port to the area names the site knows (handed in by the composition root: metering's meterAreas and energy's
 * areaCardNames; facility is built before both and reads neither table).
 */
export type AreaSources = {
  /** The areas the meters count towards. */
  meterAreas(): string[];
  /** The hand-entered area cards' names. */
  cardNames(): string[];
  /** The area of the meter reading this gateway point, if it has one. */
  meterArea(code: string): string | null;
};

export class AlarmAreas {
  private readonly all;
  private readonly mappedArea;

  constructor(
    private readonly db: Db,
    private readonly audit: AuditLog,
    private readonly sources: AreaSources,
  ) {
    const orm = db.orm;
    const columns = { code: alarmAreas.code, match: alarmAreas.match, area: alarmAreas.area };
    this.all = orm.select(columns).from(alarmAreas).orderBy(sql`${alarmAreas.match} = 'prefix'`, asc(alarmAreas.code)).prepare();
    // Read per alarm, never kept: a restore or another writer cannot leave a stale copy. An exact code first, then the
    // longest prefix; the map is small (at most ALARM_AREA_LIMIT rows).
    const code = sql.placeholder('code');
    this.mappedArea = orm
      .select({ area: alarmAreas.area })
      .from(alarmAreas)
      .where(
        or(
          and(eq(alarmAreas.match, 'exact'), eq(alarmAreas.code, code)),
          and(eq(alarmAreas.match, 'prefix'), sql`substr(${code}, 1, length(${alarmAreas.code})) = ${alarmAreas.code}`),
        ),
      )
      .orderBy(sql`${alarmAreas.match} = 'prefix'`, desc(sql`length(${alarmAreas.code})`))
      .limit(1)
      .prepare();
  }

  /** The area names the site knows: the meters' areas and the area cards, sorted ignoring case. */
  private areaNames(): string[] {
    const names = new Set<string>([...this.sources.meterAreas(), ...this.sources.cardNames()]);
    return [...names].sort((a, b) => a.localeCompare(b, 'en', { sensitivity: 'base' }) || (a < b ? -1 : 1));
  }

  /** The map and the area names a mapping may use. */
  get(): AlarmAreaMapView {
    return { mappings: this.all.all() as AlarmAreaMappingValue[], areas: this.areaNames() };
  }

  /**
   * Replaces the whole map in one audited transaction. An area must be one the site knows (a typo would raise alarms
   * in an area no view shows); a code may be listed once per match. Alerts already raised keep their area.
   */
  replace(actor: Actor, mappings: AlarmAreaMappingValue[]): AlarmAreaMapView {
    const known = new Map(this.areaNames().map((name) => [name.toLowerCase(), name]));
    const details: ErrorDetail[] = [];
    const seen = new Map<string, number>();
    const named = mappings.map((mapping, index) => {
      const key = `${mapping.match} ${mapping.code}`;
      if (seen.has(key))
        details.push({ path: `body.mappings.${index}.code`, message: `duplicates mappings.${seen.get(key)} (${mapping.match} ${mapping.code})` });
      seen.set(key, index);
      const area = known.get(mapping.area.toLowerCase());
      if (!area) {
        const names = [...known.values()];
        const listed = names.length
          ? `one of: ${names.slice(0, 20).join(', ')}${names.length > 20 ? ', …' : ''}`
          : 'none yet: give a meter an area or add an area card';
        details.push({ path: `body.mappings.${index}.area`, message: `no area named "${mapping.area}" (${listed})` });
      }
      // The area as the site spells it, so ?area= on the wallboard and /api/alerts finds the alerts.
      return { ...mapping, area: area ?? mapping.area };
    });
    if (details.length) throw new BadRequest('Invalid body', details);
    return this.db.sqlite.transaction(() => {
      const before = this.all.all();
      const now = new Date().toISOString();
      this.db.orm.delete(alarmAreas).run();
      if (named.length)
        this.db.orm
          .insert(alarmAreas)
          .values(named.map((mapping) => ({ ...mapping, createdAt: now, updatedAt: now })))
          .run();
      const after = this.get();
      this.audit.record({ actor, action: 'replace', resource: 'alarm_areas', before, after: after.mappings });
      return after;
    })();
  }

  /** The admin's mapping of a code: the exact one, else the longest prefix; null when none matches. */
  mapped(code: string): string | null {
    return this.mappedArea.get({ code })?.area ?? null;
  }

  /**
   * The area of an alarm on `code`, and why. `pointName` is the point's name in the gateway's catalogue, when the
   * gateway gives one: it names the area when it starts with an area's name followed by a space or punctuation
   * (case ignored, the longest name first: "Server room 2 temperature" is "Server room 2" when both exist).
   */
  resolve(code: string, pointName?: string | null): { area: string | null; reason: AreaReason } {
    const mapped = this.mapped(code);
    if (mapped !== null) return { area: mapped, reason: 'mapped' };
    const metered = this.sources.meterArea(code);
    if (metered) return { area: metered, reason: 'meter' };
    if (pointName) {
      const name = pointName.toLowerCase();
      const areas = this.areaNames().sort((a, b) => b.length - a.length);
      const area = areas.find((candidate) => {
        const lower = candidate.toLowerCase();
        return name.startsWith(lower) && (name.length === lower.length || /[\s\p{P}]/u.test(name[lower.length]!));
      });
      if (area) return { area, reason: 'point name' };
    }
    return { area: null, reason: 'none' };
  }
}
