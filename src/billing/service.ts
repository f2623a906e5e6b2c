// Tenant billing's commands and reads: tenants and cost centres, how each billed meter is split, billing periods, and
// billing runs with a statement per tenant. A run is a draft until issued; issued runs never change: running an issued
// period again makes a restatement whose statements show the difference to what was issued.
import type { Actor, AuditLog } from '../platform/db/auditTrail.ts';
import type { Db } from '../platform/db/client.ts';
import type { billingRuns, AllocationMethod, AllocationShare } from '../platform/db/schema/index.ts';
import { BadRequest, Conflict, NotFound } from '../platform/errors.ts';
import { daysBetween } from '../platform/time/calendar.ts';
import type { BilledMeter, PeriodBill, Split, TenantBill } from './bill.ts';
import type { BillingCalculation } from './calculation.ts';
import { describeDoubleCount, doubleCount, firstDoubleCount, type DoubleCount } from './meterTree.ts';
import { DEFAULT_TOLERANCES } from './billAudit.ts';
import { billingStore, type BillingStore } from './store.ts';
import type {
  Allocation,
  AllocationInput,
  BillingSettings,
  BillingSettingsInput,
  Difference,
  Period,
  Run,
  RunSummary,
  Statement,
  Tenant,
  TenantInput,
} from './types.ts';
import { round } from '../platform/numbers.ts';

type RunRow = typeof billingRuns.$inferSelect;

const MAX_PERIOD_DAYS = 366;
const EPSILON = 1e-9;

export class Billing {
  private readonly sql: BillingStore;

  constructor(
    private readonly db: Db,
    private readonly audit: AuditLog,
    private readonly calculation: BillingCalculation,
    private readonly loadTariffs: () => void,
  ) {
    this.sql = billingStore(db);
  }

  // --- Tenants and cost centres -----------------------------------------------------------------------------------

  tenants(): Tenant[] {
    return this.sql.tenants.all() as Tenant[];
  }

  tenant(id: number): Tenant {
    const row = this.sql.tenant.get(id) as Tenant | undefined;
    if (!row) throw new NotFound('Tenant not found');
    return row;
  }

  createTenant(input: TenantInput, actor: Actor): Tenant {
    return this.db.sqlite.transaction(() => {
      this.assertFreeName(input.name, null);
      const { lastInsertRowid } = this.sql.insertTenant.run({
        name: input.name,
        kind: input.kind ?? 'tenant',
        contactEmail: input.contactEmail ?? null,
        floorAreaM2: input.floorAreaM2 ?? 0,
      });
      const tenant = this.tenant(Number(lastInsertRowid));
      this.audit.record({ actor, action: 'create', resource: 'billing_tenants', resourceId: tenant.id, after: tenant });
      return tenant;
    })();
  }

  updateTenant(id: number, patch: Partial<TenantInput>, actor: Actor): Tenant {
    return this.db.sqlite.transaction(() => {
      const before = this.tenant(id);
      if (patch.name !== undefined) this.assertFreeName(patch.name, id);
      const next = { ...before, ...patch };
      this.sql.updateTenant.run({
        id,
        name: next.name,
        kind: next.kind,
        contactEmail: next.contactEmail,
        floorAreaM2: next.floorAreaM2,
      });
      const after = this.tenant(id);
      this.audit.record({ actor, action: 'update', resource: 'billing_tenants', resourceId: id, before, after });
      return after;
    })();
  }

  private assertFreeName(name: string, self: number | null): void {
    const clash = this.sql.tenantByName.get(name) as { id: number } | undefined;
    if (clash && clash.id !== self) throw new Conflict(`A tenant or cost centre named "${name}" exists (id ${clash.id})`);
  }

  // --- Meter splits -----------------------------------------------------------------------------------------------

  private meters(): BilledMeter[] {
    return this.calculation.billedMeters();
  }

  allocations(): Allocation[] {
    const meters = new Map(this.meters().map((meter) => [meter.id, meter]));
    const tenants = new Map(this.tenants().map((tenant) => [tenant.id, tenant]));
    return this.sql.allocations.all().map((row) => {
      const shares = row.shares;
      const fractions = splitFractions(row.method, shares, row.landlordValue, tenants);
      return {
        meterId: row.meterId,
        meterName: meters.get(row.meterId)?.name ?? '',
        method: row.method,
        shares,
        landlordValue: row.landlordValue,
        fractions: [...fractions].map(([tenantId, fraction]) => ({ tenantId, fraction: round(fraction, 6) })),
        landlordFraction: round(1 - [...fractions.values()].reduce((a, b) => a + b, 0), 6),
      };
    });
  }

  /** Replaces how a meter is split; shares that do not add up, unknown tenants, a meter that is not billed consumption: 400. */
  putAllocation(meterId: number, input: AllocationInput, actor: Actor): Allocation {
    return this.db.sqlite.transaction(() => {
      const meter = this.meters().find((candidate) => candidate.id === meterId);
      if (!meter) throw new NotFound('Meter not found');
      if (meter.role !== 'import')
        throw new BadRequest('Invalid body', [{ path: 'params.meterId', message: `a ${meter.role} meter is not consumption a tenant is billed for` }]);
      const tenants = new Map(this.tenants().map((tenant) => [tenant.id, tenant]));
      const landlordValue = input.landlordValue ?? 0;
      const details: { path: string; message: string }[] = [];
      const seen = new Set<number>();
      input.shares.forEach((share, index) => {
        if (!tenants.has(share.tenantId)) details.push({ path: `body.shares.${index}.tenantId`, message: `no tenant or cost centre ${share.tenantId}` });
        if (seen.has(share.tenantId)) details.push({ path: `body.shares.${index}.tenantId`, message: 'a tenant appears once per meter' });
        seen.add(share.tenantId);
        if (input.method !== 'floor_area' && !(share.value > 0)) details.push({ path: `body.shares.${index}.value`, message: 'must be above 0' });
        if (input.method === 'floor_area' && tenants.has(share.tenantId) && !(tenants.get(share.tenantId)!.floorAreaM2 > 0))
          details.push({ path: `body.shares.${index}.tenantId`, message: `${tenants.get(share.tenantId)!.name} has no floor area to apportion by` });
      });
      if (input.method === 'percent') {
        const sum = input.shares.reduce((a, share) => a + share.value, 0) + landlordValue;
        if (Math.abs(sum - 100) > EPSILON)
          details.push({ path: 'body.shares', message: `the shares and the landlord's add up to ${round(sum, 6)} %, not 100 %` });
      }
      if (details.length) throw new BadRequest('The meter split does not add up', details);
      this.assertNoDoubleCount(meter, 'params.meterId');
      const before = this.sql.allocations.all().find((row) => row.meterId === meterId);
      this.sql.putAllocation.run({ meterId, method: input.method, shares: input.shares, landlordValue });
      this.audit.record({ actor, action: before ? 'update' : 'create', resource: 'billing_allocations', resourceId: meterId, before, after: input });
      return this.allocations().find((allocation) => allocation.meterId === meterId)!;
    })();
  }

  /**
   * 409 naming both meters when `meter` and a meter already split would bill the same energy: one beneath the other in
   * the meter tree (meterTree.ts), or two virtual meters sharing a term.
   */
  private assertNoDoubleCount(meter: BilledMeter, path: string): void {
    const all = this.meters();
    const byId = new Map(all.map((candidate) => [candidate.id, candidate]));
    const split = this.sql.allocations.all().flatMap((row) => (row.meterId !== meter.id && byId.has(row.meterId) ? [byId.get(row.meterId)!] : []));
    const found = doubleCount(meter, split, all);
    if (found) throw doubleCountConflict(found, byId, path);
  }

  deleteAllocation(meterId: number, actor: Actor): void {
    this.db.sqlite.transaction(() => {
      if (this.sql.deleteAllocation.run(meterId).changes === 0) throw new NotFound('The meter is not split for billing');
      this.audit.record({ actor, action: 'delete', resource: 'billing_allocations', resourceId: meterId });
    })();
  }

  // --- Rules ------------------------------------------------------------------------------------------------------

  settings(): BillingSettings {
    const row = this.sql.settings.get();
    const stored = row ?? { maxMissingPercent: 0.5, maxEstimatedPercent: 5, supplierBillTolerancePercent: 2, billAudit: {} };
    return { ...stored, billAudit: { ...DEFAULT_TOLERANCES, ...stored.billAudit } };
  }

  /** Replaces the rules; billAudit's checks not named keep what they were. */
  putSettings(input: BillingSettingsInput, actor: Actor): BillingSettings {
    return this.db.sqlite.transaction(() => {
      const before = this.settings();
      this.sql.putSettings.run({ ...input, billAudit: { ...before.billAudit, ...input.billAudit } });
      this.audit.record({ actor, action: 'update', resource: 'billing_settings', resourceId: 1, before, after: input });
      return this.settings();
    })();
  }

  // --- Periods ----------------------------------------------------------------------------------------------------

  periods(): Period[] {
    return this.sql.periods.all();
  }

  period(id: number): Period {
    const row = this.sql.period.get(id);
    if (!row) throw new NotFound('Billing period not found');
    return row;
  }

  createPeriod(input: { name?: string; from: string; to: string }, actor: Actor): Period {
    if (input.to <= input.from)
      throw new BadRequest('Invalid body', [{ path: 'body.to', message: 'must be after from (to is the first day after the period)' }]);
    if (daysBetween(input.from, input.to).length > MAX_PERIOD_DAYS)
      throw new BadRequest('Invalid body', [{ path: 'body.to', message: `a billing period is at most ${MAX_PERIOD_DAYS} days` }]);
    return this.db.sqlite.transaction(() => {
      const clash = this.sql.overlapping.get({ from: input.from, to: input.to });
      if (clash)
        throw new BadRequest('Billing periods may not overlap', [
          { path: 'body.from', message: `overlaps period ${clash.id} "${clash.name}" (${clash.from} to ${clash.to})` },
        ]);
      const { lastInsertRowid } = this.sql.insertPeriod.run({
        name: input.name ?? `${input.from} – ${input.to}`,
        from: input.from,
        to: input.to,
      });
      const period = this.period(Number(lastInsertRowid));
      this.audit.record({ actor, action: 'create', resource: 'billing_periods', resourceId: period.id, after: period });
      return period;
    })();
  }

  // --- Runs and statements ----------------------------------------------------------------------------------------

  private splits(): { splits: Split[]; tenantIds: number[] } {
    const meters = new Map(this.meters().map((meter) => [meter.id, meter]));
    const tenants = new Map(this.tenants().map((tenant) => [tenant.id, tenant]));
    const splits: Split[] = [];
    for (const row of this.sql.allocations.all()) {
      const meter = meters.get(row.meterId);
      if (!meter) continue;
      splits.push({ meter, method: row.method, fractions: splitFractions(row.method, row.shares, row.landlordValue, tenants) });
    }
    const tenantIds = [...new Set(splits.flatMap((split) => [...split.fractions].filter(([, f]) => f > 0).map(([id]) => id)))];
    return { splits, tenantIds };
  }

  /**
   * Computes the period's draft: a new one, or the existing draft recomputed in place (its id kept), so two runs of
   * one period at once leave one statement set. After an issued run, the draft is a restatement of it. The intervals
   * are read before the transaction (a meter split meanwhile is read inside it).
   */
  async runPeriod(periodId: number, actor: Actor): Promise<Run> {
    const period = this.period(periodId);
    if (!this.splits().splits.length) throw new BadRequest('No meter is split between tenants yet: PUT /api/billing/allocations/{meterId} first');
    // The intervals are read and priced first, in slices with the event loop free; the transaction then bills them.
    this.loadTariffs();
    const all = this.meters();
    const { splits: before } = this.splits();
    const site = this.calculation.siteMeters(all);
    const wanted = [...site, ...before.map((split) => split.meter)];
    const read = await this.calculation.readPeriods(wanted, period.from, period.to, this.calculation.estimatedMeters(before, site));
    // The tariff versions are cached before the transaction (a cache is not filled inside one).
    this.loadTariffs();
    const runId = this.db.sqlite
      .transaction(() => {
        const { splits, tenantIds } = this.splits();
        if (!splits.length) throw new BadRequest('No meter is split between tenants yet: PUT /api/billing/allocations/{meterId} first');
        // Splits made before the check, or a meter made a site meter since: a run never bills energy twice either.
        const meters = this.meters();
        const found = firstDoubleCount(
          splits.map((split) => split.meter),
          meters,
        );
        if (found) throw doubleCountConflict(found, new Map(meters.map((meter) => [meter.id, meter])), `allocations.${found.meter.id}`);
        const issuedId = this.sql.lastIssuedOf.get(periodId)?.id ?? null;
        const issued = issuedId === null ? [] : this.sql.statementRows.all(issuedId);
        const ids = [...new Set([...tenantIds, ...issued.map((row) => row.tenantId)])];
        const bill = this.calculation.compute(period.from, period.to, meters, splits, ids, read);
        const summary = summaryOf(bill);
        const kind = issuedId === null ? 'initial' : 'restatement';
        const draft = this.sql.draftOf.get(periodId);
        let id: number;
        if (draft) {
          this.sql.updateDraft.run({ id: draft.id, kind, correctsRunId: issuedId, summary });
          this.sql.deleteStatements.run(draft.id);
          id = draft.id;
        } else {
          id = this.sql.insertRun.run({ periodId, kind, correctsRunId: issuedId, summary }).lastInsertRowid;
        }
        for (const tenantId of ids) {
          const content = bill.tenants.get(tenantId)!;
          const before = issued.find((row) => row.tenantId === tenantId);
          this.sql.insertStatement.run({
            runId: id,
            tenantId,
            totalCents: content.totalCents,
            content,
            difference: issuedId === null ? null : differenceOf(content, before ? { id: before.id, content: before.content as TenantBill } : null),
          });
        }
        this.audit.record({
          actor,
          action: draft ? 'recompute' : 'create',
          resource: 'billing_runs',
          resourceId: id,
          after: { periodId, kind, siteTotalCents: bill.site.totalCents, statements: ids.length },
        });
        return id;
      })
      .immediate();
    return this.run(runId);
  }

  run(id: number): Run {
    const row = this.sql.run.get(id);
    if (!row) throw new NotFound('Billing run not found');
    return this.runView(row);
  }

  runs(periodId: number): Run[] {
    this.period(periodId);
    return this.sql.runs.all(periodId).map((row) => this.runView(row));
  }

  private runView(row: RunRow): Run {
    return {
      id: row.id,
      periodId: row.periodId,
      period: this.period(row.periodId),
      status: row.status,
      kind: row.kind,
      correctsRunId: row.correctsRunId,
      computedAt: row.computedAt,
      issuedAt: row.issuedAt,
      issuedBy: row.issuedBy,
      summary: row.summary as RunSummary,
      statements: this.sql.statementsOf.all(row.id) as Run['statements'],
    };
  }

  /** Issues a draft: refused (400) where the data is more missing or estimated than the site's rules allow. Audited; never changes after. */
  issue(id: number, actor: Actor): Run {
    this.db.sqlite
      .transaction(() => {
        const run = this.run(id);
        if (run.status === 'issued') throw new Conflict('The run is issued already; run the period again for a restatement');
        const rules = this.settings();
        const { quality } = run.summary;
        const details: { path: string; message: string }[] = [];
        if (quality.missingPercent > rules.maxMissingPercent)
          details.push({
            path: 'quality.missing',
            message: `${quality.missing} of ${quality.intervals} metered intervals (${quality.missingPercent} %) have no data; the site allows ${rules.maxMissingPercent} %`,
          });
        if (quality.estimatedPercent > rules.maxEstimatedPercent)
          details.push({
            path: 'quality.estimated',
            message: `${quality.estimated} of ${quality.intervals} metered intervals (${quality.estimatedPercent} %) are estimated; the site allows ${rules.maxEstimatedPercent} %`,
          });
        if (details.length) throw new BadRequest('The run cannot be issued: too much of its data is missing or estimated', details);
        this.sql.issueRun.run({ id, by: actor.username });
        this.audit.record({
          actor,
          action: 'issue',
          resource: 'billing_runs',
          resourceId: id,
          after: { periodId: run.periodId, kind: run.kind, reconciliation: run.summary.reconciliation, statements: run.statements },
        });
      })
      .immediate();
    return this.run(id);
  }

  statement(id: number): Statement {
    const row = this.sql.statement.get(id);
    if (!row) throw new NotFound('Statement not found');
    const run = this.sql.run.get(row.runId)!;
    const tenant = this.tenant(row.tenantId);
    return {
      id: row.id,
      runId: row.runId,
      status: run.status,
      kind: run.kind,
      tenant: { id: tenant.id, name: tenant.name, kind: tenant.kind, contactEmail: tenant.contactEmail },
      period: this.period(run.periodId),
      currency: (run.summary as RunSummary).currency,
      totalCents: row.totalCents,
      content: row.content as TenantBill,
      difference: (row.difference ?? null) as Difference | null,
    };
  }
}

/** 409 naming both meters of a double count. */
function doubleCountConflict(found: DoubleCount, byId: Map<number, BilledMeter>, path: string): Conflict {
  return new Conflict('The split would bill the same energy twice', [
    { path, message: describeDoubleCount(found, byId) },
    { path: 'meters', message: `${found.meter.id}, ${found.other.id}` },
  ]);
}

/** A split's fractions per tenant; the landlord keeps the rest (its percentage, vacant floor area or weight). */
export function splitFractions(
  method: AllocationMethod,
  shares: AllocationShare[],
  landlordValue: number,
  tenants: Map<number, { floorAreaM2: number }>,
): Map<number, number> {
  const weights = shares.map((share) => ({
    tenantId: share.tenantId,
    weight: method === 'floor_area' ? (tenants.get(share.tenantId)?.floorAreaM2 ?? 0) : share.value,
  }));
  const whole = method === 'percent' ? 100 : weights.reduce((a, w) => a + w.weight, 0) + landlordValue;
  return new Map(weights.map((w) => [w.tenantId, whole > 0 ? w.weight / whole : 0]));
}

function summaryOf(bill: PeriodBill): RunSummary {
  const statementsCents = [...bill.tenants.values()].reduce((sum, tenant) => sum + tenant.totalCents, 0);
  return {
    currency: bill.currency,
    site: bill.site,
    landlord: bill.landlord,
    quality: bill.quality,
    reconciliation: { siteTotalCents: bill.site.totalCents, statementsCents, landlordCents: bill.landlord.totalCents },
  };
}

function differenceOf(now: TenantBill, before: { id: number; content: TenantBill } | null): Difference {
  const energy = new Map<string, Difference['energy'][number]>();
  const add = (line: TenantBill['energy'][number], sign: 1 | -1) => {
    const key = `${line.utility}|${line.band}`;
    const entry = energy.get(key) ?? { utility: line.utility, band: line.band, quantity: 0, amountCents: 0 };
    entry.quantity = round(entry.quantity + sign * line.quantity, 3);
    entry.amountCents += sign * line.amountCents;
    energy.set(key, entry);
  };
  for (const line of now.energy) add(line, 1);
  for (const line of before?.content.energy ?? []) add(line, -1);
  const cents = (bill: TenantBill | undefined, lines: 'standing' | 'demand') => (bill?.[lines] ?? []).reduce((sum, line) => sum + line.amountCents, 0);
  return {
    correctsStatementId: before?.id ?? null,
    totalCents: now.totalCents - (before?.content.totalCents ?? 0),
    energy: [...energy.values()],
    standingCents: cents(now, 'standing') - cents(before?.content, 'standing'),
    demandCents: cents(now, 'demand') - cents(before?.content, 'demand'),
  };
}
