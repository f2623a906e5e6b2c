// Tariffs of a tenant's or a meter's own (issue 51): dated versions that price a tenant's share of its meters, or
// every share of one meter, instead of the site's tariff; the site's stays the default and the supplier's bill.
import type { Actor, AuditLog } from '../platform/db/auditTrail.ts';
import type { Db } from '../platform/db/client.ts';
import { and, asc, eq } from 'drizzle-orm';
import { billingTariffs, type Commodity, type TariffBand } from '../platform/db/schema/index.ts';
import { BadRequest, Conflict, NotFound } from '../platform/errors.ts';

export type OwnTariff = {
  id: number;
  tenantId: number | null;
  meterId: number | null;
  commodity: Commodity;
  validFrom: string;
  price: number;
  bands: TariffBand[];
  holidays: string[];
  standingChargePerDay: number;
  note: string;
  createdAt: string;
  createdBy: string | null;
};
export type OwnTariffInput = {
  tenantId?: number | null;
  meterId?: number | null;
  commodity?: Commodity;
  validFrom: string;
  price: number;
  bands?: TariffBand[];
  holidays?: string[];
  standingChargePerDay?: number;
  note?: string;
};
/** Whose tariff: a tenant's (its share of every meter) or a meter's (every share of it). */
export type Party = { tenantId: number } | { meterId: number };

const minutes = (clock: string) => Number(clock.slice(0, 2)) * 60 + Number(clock.slice(3, 5));

export class OwnTariffs {
  private readonly sql;

  constructor(
    private readonly db: Db,
    private readonly audit: AuditLog,
    private readonly exists: { tenant: (id: number) => boolean; meter: (id: number) => { commodity: Commodity } | undefined },
  ) {
    const orm = db.orm;
    this.sql = {
      all: () => orm.select().from(billingTariffs).orderBy(asc(billingTariffs.validFrom), asc(billingTariffs.id)).all(),
      one: (id: number) => orm.select().from(billingTariffs).where(eq(billingTariffs.id, id)).get(),
      insert: (row: typeof billingTariffs.$inferInsert) => orm.insert(billingTariffs).values(row).returning({ id: billingTariffs.id }).get().id,
      remove: (id: number) => orm.delete(billingTariffs).where(eq(billingTariffs.id, id)).run(),
      clash: (party: Party, commodity: Commodity, validFrom: string) =>
        orm
          .select({ id: billingTariffs.id })
          .from(billingTariffs)
          .where(
            and(
              'tenantId' in party ? eq(billingTariffs.tenantId, party.tenantId) : eq(billingTariffs.meterId, party.meterId),
              eq(billingTariffs.commodity, commodity),
              eq(billingTariffs.validFrom, validFrom),
            ),
          )
          .get(),
    };
  }

  list(): OwnTariff[] {
    return this.sql.all() as OwnTariff[];
  }

  /**
   * Adds a version. Back-dated versions are allowed: issued statements never change, the next run of an issued period
   * is a restatement priced by it. Bad input names the field (400); the same party, utility and day twice is 409.
   */
  create(input: OwnTariffInput, actor: Actor): OwnTariff {
    const details: { path: string; message: string }[] = [];
    const commodity = input.commodity ?? 'electricity';
    const hasTenant = input.tenantId != null;
    const hasMeter = input.meterId != null;
    if (hasTenant === hasMeter)
      details.push({ path: 'body.tenantId', message: 'give exactly one of tenantId (a tenant’s own tariff) and meterId (a meter’s own tariff)' });
    if (hasTenant && !this.exists.tenant(input.tenantId!)) details.push({ path: 'body.tenantId', message: `no tenant or cost centre ${input.tenantId}` });
    if (hasMeter) {
      const meter = this.exists.meter(input.meterId!);
      if (!meter) details.push({ path: 'body.meterId', message: `no meter ${input.meterId}` });
      else if (meter.commodity !== commodity)
        details.push({ path: 'body.commodity', message: `meter ${input.meterId} measures ${meter.commodity}, not ${commodity}` });
      if ((input.standingChargePerDay ?? 0) !== 0)
        details.push({ path: 'body.standingChargePerDay', message: "a meter's own tariff prices its energy; a standing charge belongs to a tenant's tariff" });
    }
    const bands = input.bands ?? [];
    if (bands.length && commodity !== 'electricity')
      details.push({ path: 'body.bands', message: 'time-of-use bands price electricity intervals; a water or heat tariff has one price' });
    const names = new Set<string>();
    bands.forEach((band, index) => {
      if (minutes(band.from) === minutes(band.to)) details.push({ path: `body.bands.${index}.to`, message: 'must differ from from' });
      if (names.has(band.name) || band.name === 'base')
        details.push({ path: `body.bands.${index}.name`, message: 'a band name appears once and is not "base"' });
      names.add(band.name);
    });
    if (details.length) throw new BadRequest('Invalid tariff', details);
    return this.db.sqlite.transaction(() => {
      const party: Party = hasTenant ? { tenantId: input.tenantId! } : { meterId: input.meterId! };
      const clash = this.sql.clash(party, commodity, input.validFrom);
      if (clash) throw new Conflict(`Tariff ${clash.id} already starts on ${input.validFrom} for this ${hasTenant ? 'tenant' : 'meter'} and utility`);
      const id = this.sql.insert({
        tenantId: input.tenantId ?? null,
        meterId: input.meterId ?? null,
        commodity,
        validFrom: input.validFrom,
        price: input.price,
        bands,
        holidays: input.holidays ?? [],
        standingChargePerDay: input.standingChargePerDay ?? 0,
        note: input.note ?? '',
        createdBy: actor.username,
      });
      const created = this.sql.one(id) as OwnTariff;
      this.audit.record({ actor, action: 'create', resource: 'billing_tariffs', resourceId: id, after: created });
      return created;
    })();
  }

  /** Removes a version; issued statements keep what they were issued with. */
  delete(id: number, actor: Actor): void {
    this.db.sqlite.transaction(() => {
      const before = this.sql.one(id);
      if (!before) throw new NotFound('Tariff not found');
      this.sql.remove(id);
      this.audit.record({ actor, action: 'delete', resource: 'billing_tariffs', resourceId: id, before });
    })();
  }

  /** The versions of a period, read once: `inForce` then answers per party, utility and day without the database. */
  snapshot(): OwnTariffBook {
    return new OwnTariffBook(this.list());
  }
}

/** Every own tariff version, for lookups during a run (inside its transaction, without further reads). */
export class OwnTariffBook {
  constructor(private readonly versions: OwnTariff[]) {}

  get empty(): boolean {
    return this.versions.length === 0;
  }

  /** The party's version in force on a day (the latest validFrom not after it), or null. */
  inForce(party: Party, commodity: Commodity, day: string): OwnTariff | null {
    let found: OwnTariff | null = null;
    for (const version of this.versions) {
      const mine = 'tenantId' in party ? version.tenantId === party.tenantId : version.meterId === party.meterId;
      if (mine && version.commodity === commodity && version.validFrom <= day && (!found || version.validFrom >= found.validFrom)) found = version;
    }
    return found;
  }
}
