// Tenant and cost-centre billing (issue 42): who is billed for which meters, billing periods, runs and their
// statements (immutable once issued), the billing rules of the site, and the supplier's bills checked against the meters.
import { sql } from 'drizzle-orm';
import { index, integer, real, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core';
import { createdAt, id, updatedAt } from './columns.ts';
import { COMMODITIES, meters, type TariffBand } from './energy.ts';

export const BILLED_PARTY_KINDS = ['tenant', 'cost_centre'] as const;
/** How a meter's energy is split: by percentage, by the tenants' floor areas (common areas) or by a fixed key. */
export const ALLOCATION_METHODS = ['percent', 'floor_area', 'fixed_key'] as const;
export type AllocationMethod = (typeof ALLOCATION_METHODS)[number];
/** percent: the percentage; floor_area: unused (the tenant's floor area counts); fixed_key: the tenant's weight. */
export type AllocationShare = { tenantId: number; value: number };

export const billingTenants = sqliteTable(
  'billing_tenants',
  {
    id: id(),
    name: text('name').notNull(),
    kind: text('kind', { enum: BILLED_PARTY_KINDS }).notNull().default('tenant'),
    /** Where its statements are mailed when a run is issued; null: not mailed. */
    contactEmail: text('contact_email'),
    /** Lettable floor area (m²), the key of common areas apportioned by floor area. */
    floorAreaM2: real('floor_area_m2').notNull().default(0),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [uniqueIndex('billing_tenants_name_unique').on(t.name)],
);

/** One row per billed meter: how its energy is split between tenants; what no tenant takes is the landlord's. */
export const billingAllocations = sqliteTable('billing_allocations', {
  meterId: integer('meter_id')
    .primaryKey()
    .references(() => meters.id, { onDelete: 'cascade' }),
  method: text('method', { enum: ALLOCATION_METHODS }).notNull(),
  shares: text('shares', { mode: 'json' }).$type<AllocationShare[]>().notNull(),
  /** percent: the landlord's percentage; floor_area: vacant floor area (m²); fixed_key: the landlord's weight. */
  landlordValue: real('landlord_value').notNull().default(0),
  updatedAt: updatedAt(),
});

/** The site's billing rules: one row (id 1). */
export const billingSettings = sqliteTable('billing_settings', {
  id: integer('id').primaryKey(),
  /** A run whose metered intervals are missing above this share cannot be issued. */
  maxMissingPercent: real('max_missing_percent').notNull().default(0.5),
  /** Likewise for intervals estimated by the collector (spread over a gap). */
  maxEstimatedPercent: real('max_estimated_percent').notNull().default(5),
  /** A supplier bill line differing from the shadow bill by more than this share is flagged. */
  supplierBillTolerancePercent: real('supplier_bill_tolerance_percent').notNull().default(2),
  /** The supplier-bill audit's tolerance per check (issue 51), JSON; a check not named takes its documented default. */
  billAudit: text('bill_audit', { mode: 'json' }).$type<Record<string, number>>().notNull().default({}),
  updatedAt: updatedAt(),
});

/** [fromDay, toDay) in site days; periods never overlap. */
export const billingPeriods = sqliteTable(
  'billing_periods',
  {
    id: id(),
    name: text('name').notNull(),
    fromDay: text('from_day').notNull(),
    toDay: text('to_day').notNull(),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex('billing_periods_from_unique').on(t.fromDay)],
);

export const BILLING_RUN_STATUSES = ['draft', 'issued'] as const;
export const BILLING_RUN_KINDS = ['initial', 'restatement'] as const;

export const billingRuns = sqliteTable(
  'billing_runs',
  {
    id: id(),
    periodId: integer('period_id')
      .notNull()
      .references(() => billingPeriods.id),
    status: text('status', { enum: BILLING_RUN_STATUSES }).notNull().default('draft'),
    kind: text('kind', { enum: BILLING_RUN_KINDS }).notNull(),
    /** A restatement: the issued run it corrects. */
    correctsRunId: integer('corrects_run_id'),
    computedAt: text('computed_at').notNull(),
    issuedAt: text('issued_at'),
    issuedBy: text('issued_by'),
    /** The site's bill, the landlord's share and the data quality of the run (JSON). */
    summary: text('summary', { mode: 'json' }).$type<unknown>().notNull(),
  },
  // One draft per period: two runs at once recompute the same draft, never make two statement sets.
  (t) => [uniqueIndex('billing_runs_one_draft').on(t.periodId).where(sql`status = 'draft'`), index('billing_runs_period').on(t.periodId)],
);

export const billingStatements = sqliteTable(
  'billing_statements',
  {
    id: id(),
    runId: integer('run_id')
      .notNull()
      .references(() => billingRuns.id, { onDelete: 'cascade' }),
    tenantId: integer('tenant_id')
      .notNull()
      .references(() => billingTenants.id),
    /** In cents, the sum of the statement's rounded lines. */
    totalCents: integer('total_cents').notNull(),
    content: text('content', { mode: 'json' }).$type<unknown>().notNull(),
    /** A restatement's statement: what changed against the issued statement it corrects (JSON); null otherwise. */
    difference: text('difference', { mode: 'json' }).$type<unknown>(),
  },
  (t) => [uniqueIndex('billing_statements_run_tenant').on(t.runId, t.tenantId)],
);

/** A supplier's invoice for one supply point (a site meter) and period, as entered or imported. */
export const supplierBills = sqliteTable(
  'supplier_bills',
  {
    id: id(),
    meterId: integer('meter_id')
      .notNull()
      .references(() => meters.id, { onDelete: 'cascade' }),
    fromDay: text('from_day').notNull(),
    toDay: text('to_day').notNull(),
    reference: text('reference').notNull().default(''),
    /** Quantity per time-of-use band (band name → kWh or m³). */
    bands: text('bands', { mode: 'json' }).$type<Record<string, number>>().notNull(),
    billedKw: real('billed_kw'),
    standingCharges: real('standing_charges').notNull().default(0),
    total: real('total').notNull(),
    /** Gas: kWh per m³ on the bill. */
    calorificValue: real('calorific_value'),
    /** The bill's lines as printed (issue 51): energy per band, standing, demand, taxes and levies, adjustments (JSON). */
    lines: text('lines', { mode: 'json' }).$type<SupplierBillLine[]>().notNull().default([]),
    /** The supply meter's register at the bill's start and end as printed; null when the bill shows none. */
    startReading: real('start_reading'),
    endReading: real('end_reading'),
    createdAt: createdAt(),
    createdBy: text('created_by'),
  },
  (t) => [index('supplier_bills_meter').on(t.meterId, t.fromDay)],
);

export const SUPPLIER_BILL_LINE_KINDS = ['energy', 'standing', 'demand', 'tax', 'adjustment'] as const;
/** One printed line of a supplier bill; quantity and rate as printed where the line has them, the amount always. */
export type SupplierBillLine = {
  kind: (typeof SUPPLIER_BILL_LINE_KINDS)[number];
  description?: string;
  /** energy: the time-of-use band. */
  band?: string;
  /** The days the line covers, [from, to) within the bill's; absent: the bill's. */
  from?: string;
  to?: string;
  /** energy: kWh; standing: days; demand: kW; tax: its base (kWh, or money for a percentage). */
  quantity?: number;
  /** energy: per kWh; standing: per day; demand: per kW; tax: per unit of its base. */
  rate?: number;
  amount: number;
};

/**
 * A tenant's or a meter's own dated tariff (issue 51): its energy priced at this instead of the site's tariff from
 * validFrom until its next version. Exactly one of tenantId and meterId.
 */
export const billingTariffs = sqliteTable(
  'billing_tariffs',
  {
    id: id(),
    tenantId: integer('tenant_id').references(() => billingTenants.id, { onDelete: 'cascade' }),
    meterId: integer('meter_id').references(() => meters.id, { onDelete: 'cascade' }),
    commodity: text('commodity', { enum: COMMODITIES }).notNull().default('electricity'),
    validFrom: text('valid_from').notNull(),
    /** Per unit outside every band (kWh; m³ for water; gas per kWh). */
    price: real('price').notNull(),
    bands: text('bands', { mode: 'json' }).$type<TariffBand[]>().notNull().default([]),
    holidays: text('holidays', { mode: 'json' }).$type<string[]>().notNull().default([]),
    /** The party's own standing charge per day, instead of its share of the site's. */
    standingChargePerDay: real('standing_charge_per_day').notNull().default(0),
    note: text('note').notNull().default(''),
    createdAt: createdAt(),
    createdBy: text('created_by'),
  },
  (t) => [
    uniqueIndex('billing_tariffs_tenant').on(t.tenantId, t.commodity, t.validFrom),
    uniqueIndex('billing_tariffs_meter').on(t.meterId, t.commodity, t.validFrom),
  ],
);

export const BUDGET_SCOPES = ['site', 'area', 'cost_centre'] as const;
/** last_year: by the scope's monthly quantities of the year before; even: by the days of each month. */
export const BUDGET_PHASINGS = ['last_year', 'even'] as const;

/** An annual budget per utility for the site, an area or a cost centre, in its unit and in money. */
export const billingBudgets = sqliteTable(
  'billing_budgets',
  {
    id: id(),
    year: integer('year').notNull(),
    utility: text('utility', { enum: ['electricity', 'gas', 'water', 'heat'] }).notNull(),
    scope: text('scope', { enum: BUDGET_SCOPES }).notNull(),
    /** The area's name, the cost centre's id; '' for the site. */
    target: text('target').notNull().default(''),
    quantity: real('quantity').notNull(),
    amount: real('amount').notNull(),
    phasing: text('phasing', { enum: BUDGET_PHASINGS }).notNull().default('last_year'),
    /** The forecast may pass the budget by this much before it alerts. */
    marginPercent: real('margin_percent').notNull().default(5),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [uniqueIndex('billing_budgets_unique').on(t.year, t.utility, t.scope, t.target)],
);

/** A non-routine adjustment of a measure's savings: energy added to the baseline's expectation over a period, with the reason. */
export type NonRoutineAdjustment = { from: string; to: string; kwh: number; reason: string };

/** An energy conservation measure, its baseline and what it saved (IPMVP Option B on a meter or area, C on the site). */
export const savingsMeasures = sqliteTable('savings_measures', {
  id: id(),
  name: text('name').notNull(),
  description: text('description').notNull().default(''),
  /** What it is measured on: a meter (Option B), an area's meters (B), or neither: the site's meters (C). */
  meterId: integer('meter_id').references(() => meters.id, { onDelete: 'set null' }),
  area: text('area'),
  /** What it was registered on: kept, so a measure whose meter is deleted (meterId set null) does not turn into a site measure. */
  target: text('target', { enum: ['meter', 'area', 'site'] }).notNull(),
  installedOn: text('installed_on').notNull(),
  cost: real('cost').notNull().default(0),
  baselineFrom: text('baseline_from').notNull(),
  baselineTo: text('baseline_to').notNull(),
  temperatureCode: text('temperature_code').notNull().default('temp.outdoor'),
  heatingBaseC: real('heating_base_c').notNull().default(15.5),
  coolingBaseC: real('cooling_base_c').notNull().default(21),
  /** The baseline model: EMS's degree-day model or a reference method of GET /api/analysis/baseline (analysis/caltrack.ts). */
  method: text('method', { enum: ['ems', 'caltrack-daily', 'caltrack-hourly'] })
    .notNull()
    .default('ems'),
  adjustments: text('adjustments', { mode: 'json' }).$type<NonRoutineAdjustment[]>().notNull().default([]),
  createdAt: createdAt(),
  updatedAt: updatedAt(),
});
