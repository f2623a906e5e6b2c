// Tenant billing's tables as named drizzle functions, one group per sub-resource (tenants, meter splits, rules,
// periods, runs, statements): what the billing services read and write, prepared where it pays (a run writes a
// statement per tenant).
import { and, desc, eq, gt, lt, sql } from 'drizzle-orm';
import type { Db } from '../platform/db/client.ts';
import {
  billingAllocations,
  billingPeriods,
  billingRuns,
  billingSettings,
  billingStatements,
  billingTenants,
  type AllocationMethod,
  type AllocationShare,
} from '../platform/db/schema/index.ts';
import type { TenantBill } from './bill.ts';
import type { BillingSettings, Difference, Run, RunSummary, Tenant } from './types.ts';

type Orm = Db['orm'];

const now = () => new Date().toISOString();
const byName = sql`${billingTenants.name} COLLATE NOCASE`;
const periodView = {
  id: billingPeriods.id,
  name: billingPeriods.name,
  from: billingPeriods.fromDay,
  to: billingPeriods.toDay,
  createdAt: billingPeriods.createdAt,
};
const isDraft = eq(billingRuns.status, 'draft');

/** Tenants and cost centres, by name without case. */
function tenantQueries(orm: Orm) {
  return {
    tenants: { all: () => orm.select().from(billingTenants).orderBy(byName).all() },
    tenant: { get: (id: number) => orm.select().from(billingTenants).where(eq(billingTenants.id, id)).get() },
    tenantByName: {
      get: (name: string) => orm.select({ id: billingTenants.id }).from(billingTenants).where(sql`${billingTenants.name} = ${name} COLLATE NOCASE`).get(),
    },
    insertTenant: {
      run: (row: { name: string; kind: Tenant['kind']; contactEmail: string | null; floorAreaM2: number }) => ({
        lastInsertRowid: orm.insert(billingTenants).values(row).returning({ id: billingTenants.id }).get().id,
      }),
    },
    updateTenant: {
      run: ({ id, ...row }: { id: number; name: string; kind: Tenant['kind']; contactEmail: string | null; floorAreaM2: number }) =>
        orm
          .update(billingTenants)
          .set({ ...row, updatedAt: now() })
          .where(eq(billingTenants.id, id))
          .run(),
    },
  };
}

/** How each billed meter is split. */
function allocationQueries(orm: Orm) {
  return {
    allocations: { all: () => orm.select().from(billingAllocations).orderBy(billingAllocations.meterId).all() },
    putAllocation: {
      run: (row: { meterId: number; method: AllocationMethod; shares: AllocationShare[]; landlordValue: number }) =>
        orm
          .insert(billingAllocations)
          .values({ ...row, updatedAt: now() })
          .onConflictDoUpdate({
            target: billingAllocations.meterId,
            set: { method: row.method, shares: row.shares, landlordValue: row.landlordValue, updatedAt: now() },
          })
          .run(),
    },
    deleteAllocation: { run: (meterId: number) => orm.delete(billingAllocations).where(eq(billingAllocations.meterId, meterId)).run() },
  };
}

/** The site's billing rules (one row). */
function settingsQueries(orm: Orm) {
  return {
    settings: {
      get: () =>
        orm
          .select({
            maxMissingPercent: billingSettings.maxMissingPercent,
            maxEstimatedPercent: billingSettings.maxEstimatedPercent,
            supplierBillTolerancePercent: billingSettings.supplierBillTolerancePercent,
            billAudit: billingSettings.billAudit,
          })
          .from(billingSettings)
          .where(eq(billingSettings.id, 1))
          .get(),
    },
    putSettings: {
      run: (row: Omit<BillingSettings, 'billAudit'> & { billAudit: Record<string, number> }) =>
        orm
          .insert(billingSettings)
          .values({ id: 1, ...row, updatedAt: now() })
          .onConflictDoUpdate({ target: billingSettings.id, set: { ...row, updatedAt: now() } })
          .run(),
    },
  };
}

/** Billing periods, which never overlap. */
function periodQueries(orm: Orm) {
  return {
    periods: { all: () => orm.select(periodView).from(billingPeriods).orderBy(billingPeriods.fromDay).all() },
    period: { get: (id: number) => orm.select(periodView).from(billingPeriods).where(eq(billingPeriods.id, id)).get() },
    overlapping: {
      get: ({ from, to }: { from: string; to: string }) =>
        orm
          .select(periodView)
          .from(billingPeriods)
          .where(and(lt(billingPeriods.fromDay, to), gt(billingPeriods.toDay, from)))
          .limit(1)
          .get(),
    },
    insertPeriod: {
      run: ({ name, from, to }: { name: string; from: string; to: string }) => ({
        lastInsertRowid: orm.insert(billingPeriods).values({ name, fromDay: from, toDay: to }).returning({ id: billingPeriods.id }).get().id,
      }),
    },
  };
}

/** Billing runs: a draft per period until issued. */
function runQueries(orm: Orm) {
  return {
    run: { get: (id: number) => orm.select().from(billingRuns).where(eq(billingRuns.id, id)).get() },
    runs: { all: (periodId: number) => orm.select().from(billingRuns).where(eq(billingRuns.periodId, periodId)).orderBy(billingRuns.id).all() },
    draftOf: {
      get: (periodId: number) =>
        orm
          .select({ id: billingRuns.id })
          .from(billingRuns)
          .where(and(eq(billingRuns.periodId, periodId), isDraft))
          .get(),
    },
    lastIssuedOf: {
      get: (periodId: number) =>
        orm
          .select({ id: billingRuns.id })
          .from(billingRuns)
          .where(and(eq(billingRuns.periodId, periodId), eq(billingRuns.status, 'issued')))
          .orderBy(desc(billingRuns.id))
          .limit(1)
          .get(),
    },
    insertRun: {
      run: (row: { periodId: number; kind: Run['kind']; correctsRunId: number | null; summary: RunSummary }) => ({
        lastInsertRowid: orm
          .insert(billingRuns)
          .values({ ...row, status: 'draft', computedAt: now() })
          .returning({ id: billingRuns.id })
          .get().id,
      }),
    },
    updateDraft: {
      run: ({ id, ...row }: { id: number; kind: Run['kind']; correctsRunId: number | null; summary: RunSummary }) =>
        orm
          .update(billingRuns)
          .set({ ...row, computedAt: now() })
          .where(and(eq(billingRuns.id, id), isDraft))
          .run(),
    },
    issueRun: {
      run: ({ id, by }: { id: number; by: string }) =>
        orm
          .update(billingRuns)
          .set({ status: 'issued', issuedAt: now(), issuedBy: by })
          .where(and(eq(billingRuns.id, id), isDraft))
          .run(),
    },
  };
}

/** A run's statements, one per tenant. */
function statementQueries(orm: Orm) {
  // Prepared once: a run writes a statement per tenant.
  const insertStatement = orm
    .insert(billingStatements)
    .values({
      runId: sql.placeholder('runId'),
      tenantId: sql.placeholder('tenantId'),
      totalCents: sql.placeholder('totalCents'),
      content: sql.placeholder('content'),
      difference: sql.placeholder('difference'),
    })
    .prepare();
  return {
    deleteStatements: { run: (runId: number) => orm.delete(billingStatements).where(eq(billingStatements.runId, runId)).run() },
    insertStatement: {
      run: (row: { runId: number; tenantId: number; totalCents: number; content: TenantBill; difference: Difference | null }) => insertStatement.run(row),
    },
    statementsOf: {
      all: (runId: number) =>
        orm
          .select({
            id: billingStatements.id,
            tenantId: billingStatements.tenantId,
            tenantName: billingTenants.name,
            totalCents: billingStatements.totalCents,
          })
          .from(billingStatements)
          .innerJoin(billingTenants, eq(billingTenants.id, billingStatements.tenantId))
          .where(eq(billingStatements.runId, runId))
          .orderBy(byName)
          .all(),
    },
    statementRows: { all: (runId: number) => orm.select().from(billingStatements).where(eq(billingStatements.runId, runId)).all() },
    statement: { get: (id: number) => orm.select().from(billingStatements).where(eq(billingStatements.id, id)).get() },
  };
}

/** Every billing query, by name, over one connection. */
export function billingStore(db: Db) {
  const orm = db.orm;
  return {
    ...tenantQueries(orm),
    ...allocationQueries(orm),
    ...settingsQueries(orm),
    ...periodQueries(orm),
    ...runQueries(orm),
    ...statementQueries(orm),
  };
}

export type BillingStore = ReturnType<typeof billingStore>;
