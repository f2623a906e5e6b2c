// Meters: an audited resource (admins write, everyone signed in reads); discovery proposes meters from the gateway's catalogue.
import type { GatewayPort } from '../gateway/index.ts';
import { asc, eq, isNotNull, sql } from 'drizzle-orm';
import type { Actor, AuditLog } from '../platform/db/auditTrail.ts';
import { AuditedTable, type RowOf } from '../platform/db/auditedTable.ts';
import type { Db } from '../platform/db/client.ts';
import type { PageResult } from '../platform/db/listQuery.ts';
import { meterState, meters, type Commodity, type MeterRole, type MeterTerm } from '../platform/db/schema/index.ts';
import { BadRequest, Conflict } from '../platform/errors.ts';

/** The area name the site's own sum is kept under in the area cards: no meter's area may take it. */
export const SITE_TOTAL = 'total';

/**
 * The port to energy's area cards (energy owns energy_areas and is built after metering; the root hands this in, see
 * energy's meterAreaCards): a meter's area gets its card row in the meter's own write transaction, and an area name
 * spelled another way than a card's is refused. Both run synchronously on the caller's connection, inside its transaction.
 */
export type MeterAreaCards = {
  /** Adds the card row of an area (nothing when it has one), in the caller's transaction. */
  ensure(name: string, now: string): void;
  /** The card's name that equals `name` ignoring case, if any. */
  spelling(name: string): string | undefined;
};

export type Meter = RowOf<typeof meters>;
export type MeterInput = Pick<Meter, 'name' | 'kind'> & Partial<Pick<Meter, 'code' | 'area' | 'site' | 'terms' | 'enabled' | 'commodity' | 'role'>>;
export type MeterSummary = Pick<Meter, 'id' | 'name' | 'kind' | 'area' | 'commodity' | 'role' | 'site' | 'terms'>;
export type MeterProposal = {
  code: string;
  name: string;
  unit: string;
  kind: 'energy' | 'power';
  site: boolean;
  known: boolean;
  commodity: Commodity;
  role: MeterRole;
  sameMeterAs: string | null;
};

/**
 * The physical meter a point belongs to: its code without the last segment (meter.main.kwh and meter.main.kw are the
 * main incomer's counter and power point), else its name without the quantity word.
 */
export function physicalMeter(code: string, name = ''): string {
  const cut = code.search(/[._-][^._-]*$/);
  if (cut > 0) return code.slice(0, cut).toLowerCase();
  return (
    name
      .replace(/\b(energy|power|counter|demand|kwh|kw)\b/gi, '')
      .trim()
      .toLowerCase() || code.toLowerCase()
  );
}

export class MeterDirectory {
  private readonly table;
  private readonly byCode;
  private readonly builtOn;
  private readonly kindsById;
  private readonly clash;
  private readonly areaSpelling;
  private readonly siteMeters;
  private readonly areaList;
  private readonly summaryList;
  private readonly summaryOf;
  private readonly demandList;
  private readonly readingOf;
  private readonly byId;

  constructor(
    db: Db,
    audit: AuditLog,
    /** Energy's area cards (a port): a meter's area gets its card in the meter's write; a card's spelling is kept. */
    private readonly cards: MeterAreaCards,
    /** A virtual meter created or given new terms: its stored days are cleared in the write and rebuilt from its terms' after it. */
    private readonly virtualChanged?: (meter: Meter) => void,
  ) {
    this.table = new AuditedTable(db, audit, meters, {
      resource: 'meters',
      notFound: 'Meter not found',
      orderBy: [asc(meters.name), asc(meters.id)],
      check: (next, before) => this.check(next, before),
      // An area named by a meter gets its card (computed from the meters from then on).
      afterWrite: (before, after, now) => {
        if (after?.area) this.cards.ensure(after.area, now);
        if (after?.kind === 'virtual' && JSON.stringify(before?.terms) !== JSON.stringify(after.terms)) this.virtualChanged?.(after);
      },
    });
    // raw SQL: an area spelled another way (lower() on both sides) among the other meters (the cards' through the port)
    this.areaSpelling = db.sqlite.prepare('SELECT DISTINCT area FROM meters WHERE lower(area) = lower(?) AND id <> ?').pluck();
    this.areaList = db.orm.selectDistinct({ area: meters.area }).from(meters).where(isNotNull(meters.area)).prepare();
    const summary = {
      id: meters.id,
      name: meters.name,
      kind: meters.kind,
      area: meters.area,
      commodity: meters.commodity,
      role: meters.role,
      site: meters.site,
      terms: meters.terms,
    };
    this.summaryList = db.orm.select(summary).from(meters).orderBy(asc(meters.id)).prepare();
    this.summaryOf = db.orm
      .select(summary)
      .from(meters)
      .where(eq(meters.id, sql.placeholder('id')))
      .prepare();
    this.demandList = db.orm
      // kw typed as it is here: never null under this WHERE.
      .select({ meterId: meterState.meterId, kw: sql<number>`${meterState.demandKw}` })
      .from(meterState)
      .where(isNotNull(meterState.demandKw))
      .prepare();
    this.readingOf = db.orm
      .select({ lastAt: meterState.lastAt, lastValue: meterState.lastValue })
      .from(meterState)
      .where(eq(meterState.meterId, sql.placeholder('meterId')))
      .prepare();
    this.byId = db.orm
      .select({ id: meters.id })
      .from(meters)
      .where(eq(meters.id, sql.placeholder('id')))
      .prepare();
    this.byCode = db.orm
      .select({ id: meters.id })
      .from(meters)
      .where(eq(meters.code, sql.placeholder('code')))
      .prepare();
    this.siteMeters = {
      // raw SQL: the other site meters of a write, as plain rows, for the double-count warning
      statement: db.sqlite.prepare("SELECT name, code FROM meters WHERE site = 1 AND kind <> 'virtual' AND id <> ?"),
      all(id: number) {
        return this.statement.all(id) as { name: string; code: string | null }[];
      },
    };
    // raw SQL: the virtual meters built on a meter: a json_each over each one's terms (drizzle has no words for it)
    this.builtOn = db.sqlite
      .prepare("SELECT name FROM meters, json_each(meters.terms) WHERE kind = 'virtual' AND json_extract(json_each.value, '$.meterId') = ?")
      .pluck();
    // raw SQL: the kinds of a json_each set of meter ids, in one read
    this.kindsById = db.sqlite.prepare('SELECT id, kind, commodity FROM meters WHERE id IN (SELECT value FROM json_each(?))');
    // raw SQL: which of name or code clashes (CASE with lower()), in one read
    this.clash = db.sqlite
      .prepare(
        "SELECT CASE WHEN lower(name) = lower(@name) THEN 'name' ELSE 'code' END FROM meters WHERE (lower(name) = lower(@name) OR code = @code) AND id <> @id",
      )
      .pluck();
  }

  page(page: number, pageSize: number): PageResult<Meter> {
    return this.table.page([], page, pageSize);
  }

  all(): Meter[] {
    return this.table.page([], 1, 100_000).items;
  }

  /** The areas the meters are in (each once, in no set order): an area with meters has computed figures. */
  areaNames(): string[] {
    return this.areaList.all().flatMap((row) => (row.area === null ? [] : [row.area]));
  }

  /** Every meter's id, name, kind, area, commodity, role, site flag and (virtual) terms by id: what the commodity figures and billing group by. */
  summaries(): MeterSummary[] {
    return this.summaryList.all();
  }

  /** One meter's summary (see summaries), or undefined. */
  summary(id: number): MeterSummary | undefined {
    return this.summaryOf.get({ id });
  }

  /** Each meter's current demand (kW) as the collector last stored it, by meter id; meters without one are left out. */
  demands(): Map<number, number> {
    return new Map(this.demandList.all().map((row) => [row.meterId, row.kw]));
  }

  /** A meter's last reading as the collector stored it (when, epoch ms, and the register's value); undefined if never read. */
  lastReading(meterId: number): { lastAt: number; lastValue: number } | undefined {
    return this.readingOf.get({ meterId });
  }

  /** Whether a meter of this id exists (a check before naming it, without presenting the row). */
  exists(id: number): boolean {
    return this.byId.get({ id }) !== undefined;
  }

  get(id: number): Meter {
    return this.table.get(id);
  }

  create(input: MeterInput, actor: Actor | null): Meter {
    return this.table.create({ code: null, area: null, site: false, terms: [], enabled: true, commodity: 'electricity', role: 'import', ...input }, actor);
  }

  update(id: number, patch: Partial<MeterInput>, actor: Actor): Meter {
    return this.table.update(id, patch, actor);
  }

  delete(id: number, actor: Actor): void {
    const user = this.builtOn.get(id);
    if (user) throw new Conflict(`The virtual meter "${user as string}" is built on this meter; change or remove it first`);
    this.table.delete(id, actor);
  }

  /**
   * Proposes a meter for each energy or power point of the gateway's catalogue (`GET {base}/codes`); `known` marks
   * codes already metered. A gateway without a catalogue (404) answers an empty list with `catalogue: false`.
   */
  async discover(iot: Pick<GatewayPort, 'codes'>): Promise<{ catalogue: boolean; proposals: MeterProposal[] }> {
    const catalogue = await iot.codes();
    if (catalogue === null) return { catalogue: false, proposals: [] };
    const proposals: MeterProposal[] = [];
    for (const row of catalogue) {
      if (row.kind === null) continue;
      const name = row.name || row.code;
      const unit = row.unit ?? (row.kind === 'power' ? 'kW' : 'kWh');
      const what = commodityOf(row.kind, unit, `${row.code.replace(/[._-]/g, ' ')} ${name}`);
      if (!what) continue;
      proposals.push({
        code: row.code,
        name,
        unit,
        kind: row.kind === 'power' ? 'power' : 'energy',
        // Only the grid connection's import is the site's consumption meter; a gas or PV "main" is not.
        site: what.commodity === 'electricity' && what.role === 'import' && /\b(main|incomer|site|total)\b/i.test(`${row.code.replace(/[._-]/g, ' ')} ${name}`),
        known: this.byCode.get({ code: row.code }) !== undefined,
        ...what,
        sameMeterAs: null,
      });
    }
    // One physical meter, one proposal that counts: its energy counter (exact) before its power point (integrated).
    // The other points of the same meter are marked sameMeterAs and never proposed as a site meter: accepting both
    // would count the site twice.
    const chosen = new Map<string, MeterProposal>();
    for (const proposal of [...proposals].sort((a, b) => (a.kind === b.kind ? 0 : a.kind === 'energy' ? -1 : 1))) {
      const key = physicalMeter(proposal.code, proposal.name);
      const first = chosen.get(key);
      if (!first) chosen.set(key, proposal);
      else {
        proposal.sameMeterAs = first.code;
        proposal.site = false;
      }
    }
    return { catalogue: true, proposals };
  }

  private check(next: Omit<Meter, 'id'>, before: Meter | undefined): void {
    const problem = (path: string, message: string) => new BadRequest('Invalid body', [{ path: `body.${path}`, message }]);
    const clash = this.clash.get({ name: next.name, code: next.code, id: before?.id ?? 0 }) as string | undefined;
    if (clash) throw new Conflict(clash === 'name' ? `A meter named "${next.name}" exists` : `The point ${next.code} is metered already`);
    if (next.area !== null) {
      // The area-name rules of PUT /api/energy/areas: "total" is the site sum, names are one area however they are cased.
      if (next.area.toLowerCase() === SITE_TOTAL) throw problem('area', `"${SITE_TOTAL}" is reserved for the site sum`);
      const area = next.area;
      const spellings = [this.cards.spelling(area), ...(this.areaSpelling.all(area, before?.id ?? 0) as string[])];
      const spelled = spellings.find((name) => name !== undefined && name !== area);
      if (spelled !== undefined)
        throw problem('area', `names the area "${spelled}" in another case: write it as "${spelled}" (area names are case-insensitive)`);
    }
    if (before && before.kind !== next.kind) throw problem('kind', 'cannot change: add a new meter instead (its intervals mean something else)');
    if (before && before.commodity !== next.commodity) throw problem('commodity', 'cannot change: add a new meter instead (its intervals are in another unit)');
    if (before && before.role !== next.role) throw problem('role', 'cannot change: add a new meter instead (its intervals count the other way)');
    if (next.commodity !== 'electricity' && next.role !== 'import')
      throw problem('role', 'export and generation are electricity roles; a gas, water or heat meter is import');
    if (next.kind === 'power' && (next.commodity === 'gas' || next.commodity === 'water'))
      throw problem('kind', 'a gas or water meter is a volume counter (m³): kind energy');
    if (next.site && (next.commodity !== 'electricity' || next.role !== 'import'))
      throw problem('site', "only an electricity import meter is the site's consumption");
    if (next.site && next.code) {
      const twin = this.siteMeters.all(before?.id ?? 0).find((row) => row.code && physicalMeter(row.code) === physicalMeter(next.code!));
      if (twin) throw new Conflict(`"${twin.name}" (${twin.code}) is the same physical meter and already a site meter: both would count the site twice`);
    }
    if (next.kind === 'virtual') {
      if (next.code !== null) throw problem('code', 'a virtual meter reads no gateway point');
      if (!next.terms.length) throw problem('terms', 'a virtual meter needs at least one term');
      const ids = next.terms.map((term: MeterTerm) => term.meterId);
      if (new Set(ids).size !== ids.length) throw problem('terms', 'names a meter twice');
      const found = new Map((this.kindsById.all(JSON.stringify(ids)) as { id: number; kind: string; commodity: string }[]).map((row) => [row.id, row]));
      next.terms.forEach((term: MeterTerm, index: number) => {
        const row = found.get(term.meterId);
        if (!row) throw problem(`terms.${index}.meterId`, `no meter ${term.meterId}`);
        if (row.kind === 'virtual') throw problem(`terms.${index}.meterId`, 'terms are gateway meters, not other virtual meters');
        // Never m³ added to kWh.
        if (row.commodity !== next.commodity)
          throw problem(`terms.${index}.meterId`, `meters a different commodity (${row.commodity}) from this ${next.commodity} meter`);
      });
    } else {
      if (!next.code) throw problem('code', `a ${next.kind} meter reads a gateway point: code is required`);
      if (next.terms.length) throw problem('terms', 'only a virtual meter has terms');
    }
  }
}

/**
 * The commodity and role a catalogue point meters, from its kind, unit and name: m³ is gas or water (gas when named so,
 * water otherwise), kWh/kW is electricity unless named heat; an electricity point named for PV is generation, for
 * export (feed-in) export. Null: not a meter (a temperature, a setpoint).
 */
export function commodityOf(kind: string, unit: string, label: string): { commodity: Commodity; role: MeterRole } | null {
  const units = unit.trim().toLowerCase();
  if (kind === 'gas' || kind === 'water') return { commodity: kind, role: 'import' };
  if (units === 'm³' || units === 'm3') return { commodity: /\bgas\b/i.test(label) ? 'gas' : 'water', role: 'import' };
  if (kind !== 'energy' && kind !== 'power') return null;
  if (/\b(heat|thermal|district)\b/i.test(label) || /\bkwh ?th\b/.test(units)) return { commodity: 'heat', role: 'import' };
  if (/\b(pv|solar|photovoltaic|generation)\b/i.test(label)) return { commodity: 'electricity', role: 'generation' };
  if (/\b(export|feed in|feed-in)\b/i.test(label)) return { commodity: 'electricity', role: 'export' };
  return { commodity: 'electricity', role: 'import' };
}
