// Dated gas calorific values: kWh = m³ × kwhPerM3 × correctionFactor by the version in force on the site day. As with
// tariffs, a version in effect never changes; one entered for the past (from a bill) restates the gas days it covers.
import { asc, eq, sql } from 'drizzle-orm';
import type { Actor, AuditLog } from '../platform/db/auditTrail.ts';
import { AuditedTable, type RowOf } from '../platform/db/auditedTable.ts';
import type { Db } from '../platform/db/client.ts';
import type { PageResult } from '../platform/db/listQuery.ts';
import { calorificVersions } from '../platform/db/schema/index.ts';
import { BadRequest, Conflict } from '../platform/errors.ts';
import { addDays } from '../platform/time/calendar.ts';

export type CalorificVersion = RowOf<typeof calorificVersions>;
export type CalorificVersionInput = Pick<CalorificVersion, 'validFrom' | 'kwhPerM3'> & Partial<Pick<CalorificVersion, 'correctionFactor' | 'note'>>;

export type CalorificFactors = { validFrom: string; kwhPerM3: number; correctionFactor: number };

/**
 * kWh per m³ (calorific value × correction factor) for each day by the version in force that day, from versions
 * ordered by validFrom; the first version also covers days before it. NaN when there is no version at all. The one rule
 * for the site's own gas kWh and for what the box sends its fleet (src/fleetSync/batch.ts).
 */
export function kwhPerM3ByDay(versions: readonly CalorificFactors[], days: Iterable<string>): Map<string, number> {
  const out = new Map<string, number>();
  for (const day of days) {
    let found = versions[0];
    for (const version of versions) if (version.validFrom <= day) found = version;
    out.set(day, found ? found.kwhPerM3 * found.correctionFactor : Number.NaN);
  }
  return out;
}

export class CalorificValues {
  private readonly table;
  private readonly byValidFrom;
  private readonly ordered;

  constructor(
    db: Db,
    audit: AuditLog,
    private readonly today: () => string,
  ) {
    this.byValidFrom = db.orm
      .select({ id: calorificVersions.id })
      .from(calorificVersions)
      .where(eq(calorificVersions.validFrom, sql.placeholder('validFrom')))
      .prepare();
    // Read on every figure request: a handful of rows, so no cache to keep in step with other connections' writes.
    // raw SQL: read on every figure request: plain rows of three columns, no drizzle row mapper on the figures' path
    this.ordered = db.sqlite.prepare(
      'SELECT valid_from AS validFrom, kwh_per_m3 AS kwhPerM3, correction_factor AS correctionFactor FROM calorific_versions ORDER BY valid_from',
    );
    this.table = new AuditedTable(db, audit, calorificVersions, {
      resource: 'calorific_versions',
      notFound: 'Calorific value version not found',
      orderBy: [asc(calorificVersions.validFrom)],
      check: (next, before) => {
        const clash = this.byValidFrom.get({ validFrom: next.validFrom });
        if (clash && clash.id !== before?.id)
          throw new Conflict(`A calorific value version valid from ${next.validFrom} exists (id ${clash.id}); change that one instead`);
      },
    });
  }

  page(page: number, pageSize: number): PageResult<CalorificVersion> {
    return this.table.page([], page, pageSize);
  }

  get(id: number): CalorificVersion {
    return this.table.get(id);
  }

  /** A version from a future day, or a back-dated one (issue 41): the caller restates the gas days it covers (restatedDays). */
  create(input: CalorificVersionInput, actor: Actor): CalorificVersion {
    return this.table.create({ correctionFactor: 1, note: '', ...input }, actor);
  }

  update(id: number, patch: Partial<CalorificVersionInput>, actor: Actor): CalorificVersion {
    this.assertChangeable(this.table.row(id));
    if (patch.validFrom !== undefined) this.assertFuture(patch.validFrom);
    return this.table.update(id, patch, actor);
  }

  delete(id: number, actor: Actor): void {
    this.assertChangeable(this.table.row(id));
    this.table.delete(id, actor);
  }

  /** The site days up to today a version decides (from the earliest day for the first version); null when none has begun. */
  restatedDays(version: CalorificVersion): { from: string; to: string } | null {
    const tomorrow = addDays(this.today(), 1);
    const versions = this.ordered.all() as { validFrom: string }[];
    const next = versions.find((other) => other.validFrom > version.validFrom);
    const from = versions[0]?.validFrom === version.validFrom ? '1970-01-01' : version.validFrom;
    const to = next && next.validFrom < tomorrow ? next.validFrom : tomorrow;
    return from < to ? { from, to } : null;
  }

  /**
   * kWh per m³ (calorific value × correction factor) for each day, by the version in force that day; the first version
   * also covers days before it (the migration seeds one from 1970).
   */
  kwhPerM3(days: string[]): Map<string, number> {
    return kwhPerM3ByDay(this.ordered.all() as CalorificFactors[], days);
  }

  private assertFuture(validFrom: string): void {
    const today = this.today();
    if (validFrom <= today) {
      throw new BadRequest('Invalid body', [
        { path: 'body.validFrom', message: `must be after today (${today}): a version in effect is never changed, so past gas energy stays as reported` },
      ]);
    }
  }

  private assertChangeable(version: CalorificVersion): void {
    if (version.validFrom <= this.today())
      throw new Conflict(`The version valid from ${version.validFrom} is in effect and can no longer change; add a new version instead`);
  }
}
