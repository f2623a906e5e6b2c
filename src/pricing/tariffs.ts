// Dated tariff versions: price per kWh with time-of-use bands by weekday and holidays, a standing charge per day, a CO2 factor.
// A version applies from its first day until the next one's; versions in effect are never changed. A version may be
// entered for the past (an admin, from a bill): the stored costs of the days it covers are then restated (issue 41).
import { and, asc, eq, sql } from 'drizzle-orm';
import type { Actor, AuditLog } from '../platform/db/auditTrail.ts';
import { AuditedTable, type RowOf } from '../platform/db/auditedTable.ts';
import type { Db } from '../platform/db/client.ts';
import { Kept } from '../platform/db/kept.ts';
import type { PageResult } from '../platform/db/listQuery.ts';
import { tariffVersions, WEEKDAYS, type Commodity, type TariffBand } from '../platform/db/schema/index.ts';
import { BadRequest, Conflict } from '../platform/errors.ts';
import { addDays, INTERVAL_MS, localClock } from '../platform/time/calendar.ts';

export type TariffVersion = RowOf<typeof tariffVersions>;
export type TariffVersionInput = Pick<TariffVersion, 'validFrom' | 'price' | 'carbonFactor'> &
  Partial<
    Pick<
      TariffVersion,
      | 'bands'
      | 'holidays'
      | 'standingChargePerDay'
      | 'contractedPeakKw'
      | 'note'
      | 'demandChargePerKw'
      | 'demandChargeBasis'
      | 'demandChargeMinimumKw'
      | 'commodity'
      | 'feedInPrice'
    >
  >;

function minutes(clock: string): number {
  const [h, m] = clock.split(':').map(Number);
  return h * 60 + m;
}

function bandCovers(band: TariffBand, dayType: number | 'holiday', minute: number): boolean {
  const day = dayType === 'holiday' ? 'holiday' : WEEKDAYS[dayType];
  if (!band.days.includes(day)) return false;
  const from = minutes(band.from);
  const to = minutes(band.to);
  // A band whose end is before its start runs over midnight (22:00–06:00).
  return from <= to ? minute >= from && minute < to : minute >= from || minute < to;
}

/** The note of the version the energy migration seeded from the platform's price (0004_energy.sql). */
const SEEDED_NOTE = 'from the platform configuration at install';
/** The note of a version the set-up's price wrote (setupPrice). */
export const SETUP_NOTE = 'from the site settings price (set-up)';

export class Tariffs {
  private readonly table;
  /**
   * Every version, kept until tariff_versions is written or another connection commits (`emsctl`, a manual SQL fix, a
   * restore). Answered inside the collector's transactions too, where every price lookup happens.
   */
  private readonly versions: Kept<TariffVersion[]>;
  private readonly byValidFrom;

  constructor(
    db: Db,
    audit: AuditLog,
    private readonly today: () => string,
  ) {
    this.byValidFrom = db.orm
      .select({ id: tariffVersions.id })
      .from(tariffVersions)
      .where(and(eq(tariffVersions.commodity, sql.placeholder('commodity')), eq(tariffVersions.validFrom, sql.placeholder('validFrom'))))
      .prepare();
    this.table = new AuditedTable(db, audit, tariffVersions, {
      resource: 'tariff_versions',
      notFound: 'Tariff version not found',
      orderBy: [asc(tariffVersions.validFrom)],
      check: (next, before) => {
        checkVersion(next);
        // The unique index would answer 500 (SQLITE_CONSTRAINT): two versions of one day leave no tariff for it.
        const clash = this.byValidFrom.get({ commodity: next.commodity, validFrom: next.validFrom });
        if (clash && clash.id !== before?.id)
          throw new Conflict(`A ${next.commodity} tariff version valid from ${next.validFrom} exists (id ${clash.id}); change that one instead`);
      },
    });
    this.versions = new Kept(db.sqlite, { name: 'tariffs.versions', tables: ['tariff_versions'], max: 1 });
  }

  page(page: number, pageSize: number): PageResult<TariffVersion> {
    return this.table.page([], page, pageSize);
  }

  get(id: number): TariffVersion {
    return this.table.get(id);
  }

  /**
   * A version from a future day, or (issue 41) a back-dated one an admin enters from a bill: the days it covers up to
   * today are then restated by the caller (restatedDays gives them), audited.
   */
  create(input: TariffVersionInput, actor: Actor): TariffVersion {
    return this.table.create(
      {
        bands: [],
        holidays: [],
        standingChargePerDay: 0,
        contractedPeakKw: null,
        note: '',
        demandChargePerKw: 0,
        demandChargeBasis: 'monthly_peak',
        demandChargeMinimumKw: 0,
        commodity: 'electricity',
        feedInPrice: 0,
        ...input,
      },
      actor,
    );
  }

  update(id: number, patch: Partial<TariffVersionInput>, actor: Actor): TariffVersion {
    this.assertChangeable(this.table.row(id));
    if (patch.validFrom !== undefined) this.assertFuture(patch.validFrom, 'validFrom');
    return this.table.update(id, patch, actor);
  }

  delete(id: number, actor: Actor): void {
    this.assertChangeable(this.table.row(id));
    this.table.delete(id, actor);
  }

  /**
   * The site days up to today whose prices a version decides: from its validFrom (from the earliest day for the first
   * electricity version, which also covers the days before it) to the next version of its commodity, at most today.
   * Null when none of them has begun.
   */
  restatedDays(version: TariffVersion): { from: string; to: string } | null {
    const tomorrow = addDays(this.today(), 1);
    const same = this.all().filter((other) => other.commodity === version.commodity);
    const next = same.find((other) => other.validFrom > version.validFrom);
    const first = same[0]?.id === version.id && version.commodity === 'electricity';
    const from = first ? '1970-01-01' : version.validFrom;
    const to = next && next.validFrom < tomorrow ? next.validFrom : tomorrow;
    return from < to ? { from, to } : null;
  }

  /**
   * The price a site's set-up (or a later PUT /api/configs) enters (issue 52): while the site has no electricity tariff
   * of its own (only the version the energy migration seeded and versions written here), it becomes the electricity
   * tariff from the day it is entered: a version from today is created, or, entered again the same day, the one written
   * here today takes the new price (the one change to a version in effect: nothing else has priced from it but today's
   * intervals, which the caller restates). Once an admin has entered a version, the tariffs price and this answers null.
   */
  setupPrice(price: number, actor: Actor): TariffVersion | null {
    const electricity = this.all().filter((version) => version.commodity === 'electricity');
    if (electricity.some((version) => version.note !== SEEDED_NOTE && version.note !== SETUP_NOTE)) return null;
    const today = this.today();
    // The same price as in force today (a settings form saved again): nothing to write, nothing to restate.
    if (electricity.length && this.versionOn(today).price === price) return null;
    const latest = electricity[electricity.length - 1];
    if (latest?.note === SETUP_NOTE && latest.validFrom === today) return this.table.update(latest.id, { price }, actor);
    if (latest && latest.validFrom > today) return null;
    return this.create(
      { validFrom: today, price, carbonFactor: latest?.carbonFactor ?? 0, standingChargePerDay: latest?.standingChargePerDay ?? 0, note: SETUP_NOTE },
      actor,
    );
  }

  /** The electricity price in force today: its version, and whether the set-up's price made it (else a tariff an admin entered, or the seeded one). */
  priceInForce(): { price: number; validFrom: string; tariffVersionId: number; source: 'setup' | 'tariff' | 'install' } {
    const version = this.versionOn(this.today());
    const source = version.note === SETUP_NOTE ? 'setup' : version.note === SEEDED_NOTE ? 'install' : 'tariff';
    return { price: version.price, validFrom: version.validFrom, tariffVersionId: version.id, source };
  }

  /** The electricity version in effect on a site day. */
  versionOn(day: string): TariffVersion {
    const versions = this.all().filter((version) => version.commodity === 'electricity');
    let found = versions[0];
    for (const version of versions) if (version.validFrom <= day) found = version;
    if (!found) throw new Error('no tariff version: the energy migration seeds one');
    return found;
  }

  /**
   * A commodity's version in effect on a site day; electricity's first version also covers the days before it (as
   * versionOn), any other commodity is unpriced (null) before its first version.
   */
  versionFor(commodity: Commodity, day: string): TariffVersion | null {
    if (commodity === 'electricity') return this.versionOn(day);
    let found: TariffVersion | null = null;
    for (const version of this.all()) if (version.commodity === commodity && version.validFrom <= day) found = version;
    return found;
  }

  /**
   * Reads the versions into the cache now, outside a transaction: a cache is not filled inside one (src/platform/db/kept.ts), so a
   * write pricing 500 day rows in one transaction would read every version 500 times (~0.6 ms each, issue 29).
   */
  load(): void {
    this.all();
  }

  private all(): TariffVersion[] {
    return this.versions.get('all', () => this.table.page([], 1, 10_000).items);
  }

  /** Price per kWh of each interval of a site day (its first instant and interval count given). */
  prices(timezone: string, day: string, start: number, count: number): { prices: Float64Array; version: TariffVersion } {
    return this.bandPrices(this.versionOn(day), timezone, day, start, count);
  }

  /** Price per unit of each interval under a given version (any commodity). */
  bandPrices(version: TariffVersion, timezone: string, day: string, start: number, count: number): { prices: Float64Array; version: TariffVersion } {
    const prices = new Float64Array(count).fill(version.price);
    if (version.bands.length) {
      const holiday = version.holidays.includes(day);
      for (let i = 0; i < count; i += 1) {
        const { weekday, minute } = localClock(timezone, start + i * INTERVAL_MS);
        const band = version.bands.find((candidate) => bandCovers(candidate, holiday ? 'holiday' : weekday, minute));
        if (band) prices[i] = band.price;
      }
    }
    return { prices, version };
  }

  /** The time-of-use band of each interval under a version: the first band covering it, else 'base' (the version's price). */
  bandNames(version: TariffVersion, timezone: string, day: string, start: number, count: number): string[] {
    const names = new Array<string>(count).fill('base');
    if (!version.bands.length) return names;
    const holiday = version.holidays.includes(day);
    for (let i = 0; i < count; i += 1) {
      const { weekday, minute } = localClock(timezone, start + i * INTERVAL_MS);
      const band = version.bands.find((candidate) => bandCovers(candidate, holiday ? 'holiday' : weekday, minute));
      if (band) names[i] = band.name;
    }
    return names;
  }

  private assertFuture(validFrom: string, field: string): void {
    const today = this.today();
    if (validFrom <= today) {
      throw new BadRequest('Invalid body', [
        { path: `body.${field}`, message: `must be after today (${today}): a version in effect is never changed, so past costs stay as billed` },
      ]);
    }
  }

  private assertChangeable(version: TariffVersion): void {
    if (version.validFrom <= this.today())
      throw new Conflict(`The version valid from ${version.validFrom} is in effect and can no longer change; add a new version instead`);
  }
}

function checkVersion(next: Omit<TariffVersion, 'id'>): void {
  const details: { path: string; message: string }[] = [];
  next.bands.forEach((band, index) => {
    if (minutes(band.from) === minutes(band.to)) details.push({ path: `body.bands.${index}.to`, message: 'must differ from from' });
  });
  if (new Set(next.holidays).size !== next.holidays.length) details.push({ path: 'body.holidays', message: 'must not repeat a day' });
  if (next.commodity !== 'electricity') {
    // Feed-in, contracted peak and demand charges are terms of an electricity grid connection.
    if (next.bands.length)
      details.push({ path: 'body.bands', message: 'time-of-use bands price electricity intervals; a gas, water or heat tariff has one price' });
    if (next.feedInPrice !== 0) details.push({ path: 'body.feedInPrice', message: 'only an electricity tariff pays for export' });
    if (next.contractedPeakKw !== null) details.push({ path: 'body.contractedPeakKw', message: 'only an electricity tariff has a contracted peak' });
    if (next.demandChargePerKw !== 0) details.push({ path: 'body.demandChargePerKw', message: 'only an electricity tariff has a demand charge' });
  }
  if (details.length) throw new BadRequest('Invalid body', details);
}
