// Tenant billing's commands and reads: tenants and cost centres, how each billed meter is split, billing periods, and
// billing runs with a statement per tenant. A run is a draft until issued; issued runs never change: running an issued
// period again makes a restatement whose statements show the difference to what was issued.
import type { Actor, AuditLog } from '../platform/db/auditTrail.ts';
import type { Db } from '../platform/db/client.ts';
import type { AllocationMethod, AllocationShare, Commodity } from '../platform/db/schema/index.ts';
import { BadRequest, Conflict, NotFound } from '../platform/errors.ts';
import { daysBetween } from '../platform/time/calendar.ts';
import type { BillingCalculation, BilledMeter, Bill, PeriodBill, Quality, Split, TenantBill } from './calculation.ts';

export type Tenant = {
  id: number;
  name: string;
  kind: 'tenant' | 'cost_centre';
  contactEmail: string | null;
  floorAreaM2: number;
  createdAt: string;
  updatedAt: string;
};
export type TenantInput = { name: string; kind?: 'tenant' | 'cost_centre'; contactEmail?: string | null; floorAreaM2?: number };
export type Allocation = {
  meterId: number;
  meterName: string;
  method: AllocationMethod;
  shares: AllocationShare[];
  landlordValue: number;
  fractions: { tenantId: number; fraction: number }[];
  landlordFraction: number;
};
export type AllocationInput = { method: AllocationMethod; shares: AllocationShare[]; landlordValue?: number };
export type BillingSettings = { maxMissingPercent: number; maxEstimatedPercent: number; supplierBillTolerancePercent: number };
export type Period = { id: number; name: string; from: string; to: string; createdAt: string };
export type RunSummary = {
  currency: string;
  site: Bill & { meters: { meterId: number; name: string; utility: Commodity }[] };
  landlord: Bill;
  quality: Quality;
  reconciliation: { siteTotalCents: number; statementsCents: number; landlordCents: number };
};
export type Run = {
  id: number;
  periodId: number;
  period: Period;
  status: 'draft' | 'issued';
  kind: 'initial' | 'restatement';
  correctsRunId: number | null;
  computedAt: string;
  issuedAt: string | null;
  issuedBy: string | null;
  summary: RunSummary;
  statements: { id: number; tenantId: number; tenantName: string; totalCents: number }[];
};
export type Difference = {
  correctsStatementId: number | null;
  totalCents: number;
  energy: { utility: Commodity; band: string; quantity: number; amountCents: number }[];
};
export type Statement = {
  id: number;
  runId: number;
  status: 'draft' | 'issued';
  kind: 'initial' | 'restatement';
  tenant: { id: number; name: string; kind: 'tenant' | 'cost_centre'; contactEmail: string | null };
  period: Period;
  currency: string;
  totalCents: number;
  content: TenantBill;
  difference: Difference | null;
};

type RunRow = {
  id: number;
  periodId: number;
  status: 'draft' | 'issued';
  kind: 'initial' | 'restatement';
  correctsRunId: number | null;
  computedAt: string;
  issuedAt: string | null;
  issuedBy: string | null;
  summary: string;
};
type AllocationRow = { meterId: number; method: AllocationMethod; shares: string; landlordValue: number };

const MAX_PERIOD_DAYS = 366;
const EPSILON = 1e-9;

export class Billing {
  private readonly sql;

  constructor(
    private readonly db: Db,
    private readonly audit: AuditLog,
    private readonly calculation: BillingCalculation,
    private readonly loadTariffs: () => void,
  ) {
    const s = db.sqlite;
    this.sql = {
      tenants: s.prepare(
        'SELECT id, name, kind, contact_email AS contactEmail, floor_area_m2 AS floorAreaM2, created_at AS createdAt, updated_at AS updatedAt FROM billing_tenants ORDER BY name COLLATE NOCASE',
      ),
      tenant: s.prepare(
        'SELECT id, name, kind, contact_email AS contactEmail, floor_area_m2 AS floorAreaM2, created_at AS createdAt, updated_at AS updatedAt FROM billing_tenants WHERE id = ?',
      ),
      tenantByName: s.prepare('SELECT id FROM billing_tenants WHERE name = ? COLLATE NOCASE'),
      insertTenant: s.prepare(
        'INSERT INTO billing_tenants (name, kind, contact_email, floor_area_m2, created_at, updated_at) VALUES (@name, @kind, @contactEmail, @floorAreaM2, @now, @now)',
      ),
      updateTenant: s.prepare(
        'UPDATE billing_tenants SET name = @name, kind = @kind, contact_email = @contactEmail, floor_area_m2 = @floorAreaM2, updated_at = @now WHERE id = @id',
      ),
      meters: s.prepare('SELECT id, name, kind, commodity, role, site, area FROM meters ORDER BY id'),
      allocations: s.prepare('SELECT meter_id AS meterId, method, shares, landlord_value AS landlordValue FROM billing_allocations ORDER BY meter_id'),
      putAllocation: s.prepare(
        `INSERT INTO billing_allocations (meter_id, method, shares, landlord_value, updated_at) VALUES (@meterId, @method, @shares, @landlordValue, @now)
         ON CONFLICT (meter_id) DO UPDATE SET method = excluded.method, shares = excluded.shares, landlord_value = excluded.landlord_value, updated_at = excluded.updated_at`,
      ),
      deleteAllocation: s.prepare('DELETE FROM billing_allocations WHERE meter_id = ?'),
      settings: s.prepare(
        'SELECT max_missing_percent AS maxMissingPercent, max_estimated_percent AS maxEstimatedPercent, supplier_bill_tolerance_percent AS supplierBillTolerancePercent FROM billing_settings WHERE id = 1',
      ),
      putSettings: s.prepare(
        `INSERT INTO billing_settings (id, max_missing_percent, max_estimated_percent, supplier_bill_tolerance_percent, updated_at)
         VALUES (1, @maxMissingPercent, @maxEstimatedPercent, @supplierBillTolerancePercent, @now)
         ON CONFLICT (id) DO UPDATE SET max_missing_percent = excluded.max_missing_percent, max_estimated_percent = excluded.max_estimated_percent,
           supplier_bill_tolerance_percent = excluded.supplier_bill_tolerance_percent, updated_at = excluded.updated_at`,
      ),
      periods: s.prepare('SELECT id, name, from_day AS "from", to_day AS "to", created_at AS createdAt FROM billing_periods ORDER BY from_day'),
      period: s.prepare('SELECT id, name, from_day AS "from", to_day AS "to", created_at AS createdAt FROM billing_periods WHERE id = ?'),
      overlapping: s.prepare('SELECT id, name, from_day AS "from", to_day AS "to" FROM billing_periods WHERE from_day < @to AND @from < to_day LIMIT 1'),
      insertPeriod: s.prepare('INSERT INTO billing_periods (name, from_day, to_day, created_at) VALUES (@name, @from, @to, @now)'),
      run: s.prepare(
        'SELECT id, period_id AS periodId, status, kind, corrects_run_id AS correctsRunId, computed_at AS computedAt, issued_at AS issuedAt, issued_by AS issuedBy, summary FROM billing_runs WHERE id = ?',
      ),
      runs: s.prepare(
        'SELECT id, period_id AS periodId, status, kind, corrects_run_id AS correctsRunId, computed_at AS computedAt, issued_at AS issuedAt, issued_by AS issuedBy, summary FROM billing_runs WHERE period_id = ? ORDER BY id',
      ),
      draftOf: s.prepare("SELECT id FROM billing_runs WHERE period_id = ? AND status = 'draft'"),
      lastIssuedOf: s.prepare("SELECT id FROM billing_runs WHERE period_id = ? AND status = 'issued' ORDER BY id DESC LIMIT 1"),
      insertRun: s.prepare(
        "INSERT INTO billing_runs (period_id, status, kind, corrects_run_id, computed_at, summary) VALUES (@periodId, 'draft', @kind, @correctsRunId, @now, @summary)",
      ),
      updateDraft: s.prepare(
        "UPDATE billing_runs SET kind = @kind, corrects_run_id = @correctsRunId, computed_at = @now, summary = @summary WHERE id = @id AND status = 'draft'",
      ),
      issueRun: s.prepare("UPDATE billing_runs SET status = 'issued', issued_at = @now, issued_by = @by WHERE id = @id AND status = 'draft'"),
      deleteStatements: s.prepare('DELETE FROM billing_statements WHERE run_id = ?'),
      insertStatement: s.prepare(
        'INSERT INTO billing_statements (run_id, tenant_id, total_cents, content, difference) VALUES (@runId, @tenantId, @totalCents, @content, @difference)',
      ),
      statementsOf: s.prepare(
        'SELECT s.id, s.tenant_id AS tenantId, t.name AS tenantName, s.total_cents AS totalCents FROM billing_statements s JOIN billing_tenants t ON t.id = s.tenant_id WHERE s.run_id = ? ORDER BY t.name COLLATE NOCASE',
      ),
      statementRows: s.prepare('SELECT id, tenant_id AS tenantId, total_cents AS totalCents, content FROM billing_statements WHERE run_id = ?'),
      statement: s.prepare(
        'SELECT id, run_id AS runId, tenant_id AS tenantId, total_cents AS totalCents, content, difference FROM billing_statements WHERE id = ?',
      ),
    };
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
      const now = new Date().toISOString();
      const { lastInsertRowid } = this.sql.insertTenant.run({
        name: input.name,
        kind: input.kind ?? 'tenant',
        contactEmail: input.contactEmail ?? null,
        floorAreaM2: input.floorAreaM2 ?? 0,
        now,
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
        now: new Date().toISOString(),
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
    return (this.sql.meters.all() as (Omit<BilledMeter, 'site'> & { site: number })[]).map((row) => ({ ...row, site: Boolean(row.site) }));
  }

  allocations(): Allocation[] {
    const meters = new Map(this.meters().map((meter) => [meter.id, meter]));
    const tenants = new Map(this.tenants().map((tenant) => [tenant.id, tenant]));
    return (this.sql.allocations.all() as AllocationRow[]).map((row) => {
      const shares = JSON.parse(row.shares) as AllocationShare[];
      const fractions = splitFractions(row.method, shares, row.landlordValue, tenants);
      return {
        meterId: row.meterId,
        meterName: meters.get(row.meterId)?.name ?? '',
        method: row.method,
        shares,
        landlordValue: row.landlordValue,
        fractions: [...fractions].map(([tenantId, fraction]) => ({ tenantId, fraction: round6(fraction) })),
        landlordFraction: round6(1 - [...fractions.values()].reduce((a, b) => a + b, 0)),
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
          details.push({ path: 'body.shares', message: `the shares and the landlord's add up to ${round6(sum)} %, not 100 %` });
      }
      if (details.length) throw new BadRequest('The meter split does not add up', details);
      const before = (this.sql.allocations.all() as AllocationRow[]).find((row) => row.meterId === meterId);
      this.sql.putAllocation.run({ meterId, method: input.method, shares: JSON.stringify(input.shares), landlordValue, now: new Date().toISOString() });
      this.audit.record({ actor, action: before ? 'update' : 'create', resource: 'billing_allocations', resourceId: meterId, before, after: input });
      return this.allocations().find((allocation) => allocation.meterId === meterId)!;
    })();
  }

  deleteAllocation(meterId: number, actor: Actor): void {
    this.db.sqlite.transaction(() => {
      if (this.sql.deleteAllocation.run(meterId).changes === 0) throw new NotFound('The meter is not split for billing');
      this.audit.record({ actor, action: 'delete', resource: 'billing_allocations', resourceId: meterId });
    })();
  }

  // --- Rules ------------------------------------------------------------------------------------------------------

  settings(): BillingSettings {
    return (this.sql.settings.get() as BillingSettings | undefined) ?? { maxMissingPercent: 0.5, maxEstimatedPercent: 5, supplierBillTolerancePercent: 2 };
  }

  putSettings(input: BillingSettings, actor: Actor): BillingSettings {
    return this.db.sqlite.transaction(() => {
      const before = this.settings();
      this.sql.putSettings.run({ ...input, now: new Date().toISOString() });
      this.audit.record({ actor, action: 'update', resource: 'billing_settings', resourceId: 1, before, after: input });
      return this.settings();
    })();
  }

  // --- Periods ----------------------------------------------------------------------------------------------------

  periods(): Period[] {
    return this.sql.periods.all() as Period[];
  }

  period(id: number): Period {
    const row = this.sql.period.get(id) as Period | undefined;
    if (!row) throw new NotFound('Billing period not found');
    return row;
  }

  createPeriod(input: { name?: string; from: string; to: string }, actor: Actor): Period {
    if (input.to <= input.from)
      throw new BadRequest('Invalid body', [{ path: 'body.to', message: 'must be after from (to is the first day after the period)' }]);
    if (daysBetween(input.from, input.to).length > MAX_PERIOD_DAYS)
      throw new BadRequest('Invalid body', [{ path: 'body.to', message: `a billing period is at most ${MAX_PERIOD_DAYS} days` }]);
    return this.db.sqlite.transaction(() => {
      const clash = this.sql.overlapping.get({ from: input.from, to: input.to }) as Period | undefined;
      if (clash)
        throw new BadRequest('Billing periods may not overlap', [
          { path: 'body.from', message: `overlaps period ${clash.id} "${clash.name}" (${clash.from} to ${clash.to})` },
        ]);
      const { lastInsertRowid } = this.sql.insertPeriod.run({
        name: input.name ?? `${input.from} – ${input.to}`,
        from: input.from,
        to: input.to,
        now: new Date().toISOString(),
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
    for (const row of this.sql.allocations.all() as AllocationRow[]) {
      const meter = meters.get(row.meterId);
      if (!meter) continue;
      splits.push({ meter, method: row.method, fractions: splitFractions(row.method, JSON.parse(row.shares), row.landlordValue, tenants) });
    }
    const tenantIds = [...new Set(splits.flatMap((split) => [...split.fractions].filter(([, f]) => f > 0).map(([id]) => id)))];
    return { splits, tenantIds };
  }

  /**
   * Computes the period's draft: a new one, or the existing draft recomputed in place (its id kept), so two runs of
   * one period at once leave one statement set. After an issued run, the draft is a restatement of it.
   */
  runPeriod(periodId: number, actor: Actor): Run {
    const period = this.period(periodId);
    // The tariff versions are cached before the transaction (a cache is not filled inside one).
    this.loadTariffs();
    const runId = this.db.sqlite
      .transaction(() => {
        const { splits, tenantIds } = this.splits();
        if (!splits.length) throw new BadRequest('No meter is split between tenants yet: PUT /api/billing/allocations/{meterId} first');
        const issuedId = (this.sql.lastIssuedOf.get(periodId) as { id: number } | undefined)?.id ?? null;
        const issued =
          issuedId === null ? [] : (this.sql.statementRows.all(issuedId) as { id: number; tenantId: number; totalCents: number; content: string }[]);
        const ids = [...new Set([...tenantIds, ...issued.map((row) => row.tenantId)])];
        const bill = this.calculation.compute(period.from, period.to, this.meters(), splits, ids);
        const summary = JSON.stringify(summaryOf(bill));
        const now = new Date().toISOString();
        const kind = issuedId === null ? 'initial' : 'restatement';
        const draft = this.sql.draftOf.get(periodId) as { id: number } | undefined;
        let id: number;
        if (draft) {
          this.sql.updateDraft.run({ id: draft.id, kind, correctsRunId: issuedId, now, summary });
          this.sql.deleteStatements.run(draft.id);
          id = draft.id;
        } else {
          id = Number(this.sql.insertRun.run({ periodId, kind, correctsRunId: issuedId, now, summary }).lastInsertRowid);
        }
        for (const tenantId of ids) {
          const content = bill.tenants.get(tenantId)!;
          const before = issued.find((row) => row.tenantId === tenantId);
          this.sql.insertStatement.run({
            runId: id,
            tenantId,
            totalCents: content.totalCents,
            content: JSON.stringify(content),
            difference:
              issuedId === null ? null : JSON.stringify(differenceOf(content, before ? { id: before.id, content: JSON.parse(before.content) } : null)),
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
    const row = this.sql.run.get(id) as RunRow | undefined;
    if (!row) throw new NotFound('Billing run not found');
    return this.runView(row);
  }

  runs(periodId: number): Run[] {
    this.period(periodId);
    return (this.sql.runs.all(periodId) as RunRow[]).map((row) => this.runView(row));
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
      summary: JSON.parse(row.summary) as RunSummary,
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
        this.sql.issueRun.run({ id, now: new Date().toISOString(), by: actor.username });
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
    const row = this.sql.statement.get(id) as
      | { id: number; runId: number; tenantId: number; totalCents: number; content: string; difference: string | null }
      | undefined;
    if (!row) throw new NotFound('Statement not found');
    const run = this.sql.run.get(row.runId) as RunRow;
    const tenant = this.tenant(row.tenantId);
    return {
      id: row.id,
      runId: row.runId,
      status: run.status,
      kind: run.kind,
      tenant: { id: tenant.id, name: tenant.name, kind: tenant.kind, contactEmail: tenant.contactEmail },
      period: this.period(run.periodId),
      currency: (JSON.parse(run.summary) as RunSummary).currency,
      totalCents: row.totalCents,
      content: JSON.parse(row.content) as TenantBill,
      difference: row.difference === null ? null : (JSON.parse(row.difference) as Difference),
    };
  }
}

function round6(value: number): number {
  return Math.round(value * 1e6) / 1e6;
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
    entry.quantity = Math.round((entry.quantity + sign * line.quantity) * 1000) / 1000;
    entry.amountCents += sign * line.amountCents;
    energy.set(key, entry);
  };
  for (const line of now.energy) add(line, 1);
  for (const line of before?.content.energy ?? []) add(line, -1);
  return { correctsStatementId: before?.id ?? null, totalCents: now.totalCents - (before?.content.totalCents ?? 0), energy: [...energy.values()] };
}
