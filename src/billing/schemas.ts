// Request and response shapes of /api/billing.
import { Type } from '@sinclair/typebox';
import {
  ALLOCATION_METHODS,
  BILLED_PARTY_KINDS,
  BILLING_RUN_KINDS,
  BILLING_RUN_STATUSES,
  BUDGET_PHASINGS,
  BUDGET_SCOPES,
  COMMODITIES,
  SUPPLIER_BILL_LINE_KINDS,
  WEEKDAYS,
} from '../platform/db/schema/index.ts';
import { AUDIT_CHECKS } from './billAudit.ts';
import { displayTextPattern, Email, NullableTimestamp, REFUSE_UNKNOWN_FIELDS, stringEnum, Timestamp } from '../platform/http/schemas.ts';

const Day = Type.String({ format: 'date', description: 'site day YYYY-MM-DD' });
const Name = Type.String({ minLength: 1, maxLength: 120, pattern: displayTextPattern(true) });
const Cents = Type.Integer({ description: 'amount in cents of the site currency' });
const Utility = stringEnum(COMMODITIES);

export const MeterParams = Type.Object({ meterId: Type.Integer({ minimum: 1 }) });

export const Tenant = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  kind: stringEnum(BILLED_PARTY_KINDS),
  contactEmail: Type.Union([Type.String(), Type.Null()]),
  floorAreaM2: Type.Number(),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
export const TenantCreate = Type.Object(
  {
    name: Name,
    kind: Type.Optional(stringEnum(BILLED_PARTY_KINDS)),
    contactEmail: Type.Optional(Type.Union([Email, Type.Null()])),
    floorAreaM2: Type.Optional(Type.Number({ minimum: 0, maximum: 10_000_000 })),
  },
  REFUSE_UNKNOWN_FIELDS,
);
export const TenantUpdate = Type.Partial(TenantCreate, { ...REFUSE_UNKNOWN_FIELDS, minProperties: 1 });

export const AllocationBody = Type.Object(
  {
    method: stringEnum(ALLOCATION_METHODS, {
      description:
        "percent: value is the tenant percentage (with landlordValue they add up to 100); floor_area: by the tenants' floor areas (value unused; landlordValue is vacant m²); fixed_key: value is a weight (landlordValue the landlord's)",
    }),
    shares: Type.Array(
      Type.Object({ tenantId: Type.Integer({ minimum: 1 }), value: Type.Number({ minimum: 0, maximum: 1e9 }) }, { additionalProperties: false }),
      {
        minItems: 1,
        maxItems: 500,
      },
    ),
    landlordValue: Type.Optional(Type.Number({ minimum: 0, maximum: 1e9 })),
  },
  { additionalProperties: false },
);
export const Allocation = Type.Object({
  meterId: Type.Integer(),
  meterName: Type.String(),
  method: stringEnum(ALLOCATION_METHODS),
  shares: Type.Array(Type.Object({ tenantId: Type.Integer(), value: Type.Number() })),
  landlordValue: Type.Number(),
  fractions: Type.Array(Type.Object({ tenantId: Type.Integer(), fraction: Type.Number() })),
  landlordFraction: Type.Number(),
});

const settingsFields = {
  maxMissingPercent: Type.Number({ minimum: 0, maximum: 100, description: 'a run with more metered intervals missing cannot be issued' }),
  maxEstimatedPercent: Type.Number({ minimum: 0, maximum: 100, description: 'a run with more intervals estimated cannot be issued' }),
  supplierBillTolerancePercent: Type.Number({
    minimum: 0,
    maximum: 100,
    description: 'a supplier bill line further than this from the shadow bill is flagged',
  }),
};
const Percent = (description: string) => Type.Number({ minimum: 0, maximum: 1000, description });
const Money = (description: string) => Type.Number({ minimum: 0, maximum: 1e6, description });
const AuditTolerancesFields = {
  quantityPercent: Percent("a bill line's kWh against the meters' (shadow bill), percent of the meters' (default 2)"),
  ratePercent: Percent("a bill line's rate against the tariff in force, percent of the tariff's (default 0.1)"),
  amount: Money("a line's amount against quantity × rate, in money (default 0.01)"),
  total: Money("the bill's total against the sum of its lines, in money (default 0.01)"),
  demandPercent: Percent("billed kW against the month's demand from the intervals, percent (default 2)"),
  readingGap: Type.Number({
    minimum: 0,
    maximum: 1e9,
    description: "a start reading against the previous bill's end reading, in register units (default 0.5)",
  }),
  yearOnYearPercent: Percent("the bill's use against the same days 364 days earlier, percent of last year's (default 25)"),
};
export const Settings = Type.Object({ ...settingsFields, billAudit: Type.Object(AuditTolerancesFields) });
export const SettingsBody = Type.Object(
  {
    ...settingsFields,
    billAudit: Type.Optional(
      Type.Partial(Type.Object(AuditTolerancesFields), {
        additionalProperties: false,
        description: "the supplier-bill audit's tolerance per check; a check not named keeps its value",
      }),
    ),
  },
  { additionalProperties: false },
);

export const Period = Type.Object({ id: Type.Integer(), name: Type.String(), from: Day, to: Day, createdAt: Timestamp });
export const PeriodCreate = Type.Object(
  { name: Type.Optional(Name), from: Day, to: Type.String({ format: 'date', description: 'the first day after the period' }) },
  { additionalProperties: false },
);

const EnergyLine = Type.Object({
  utility: Utility,
  unit: Type.String(),
  band: Type.String(),
  quantity: Type.Number(),
  amountCents: Cents,
  estimatedQuantity: Type.Optional(Type.Number({ description: "of the line's quantity, what rests on estimated intervals of missing sub-meter data" })),
  estimatedAmountCents: Type.Optional(Type.Integer({ description: "of the line's amount, what rests on estimated intervals" })),
});
const ChargeLine = Type.Object({ utility: Utility, amountCents: Cents, rule: Type.String() });
const DemandLine = Type.Object({
  month: Type.String(),
  billedKw: Type.Number(),
  siteKwAtPeak: Type.Number(),
  shareKw: Type.Number(),
  share: Type.Number(),
  amountCents: Cents,
  peakAt: Type.Union([Timestamp, Type.Null()]),
  rule: Type.String(),
});
const BillFields = {
  energy: Type.Array(EnergyLine),
  standing: Type.Array(ChargeLine),
  demand: Type.Array(DemandLine),
  carbonKg: Type.Number(),
  totalCents: Cents,
};
const Bill = Type.Object(BillFields);
const MeterLine = Type.Object({
  meterId: Type.Integer(),
  name: Type.String(),
  utility: Utility,
  unit: Type.String(),
  method: Type.String(),
  share: Type.Number(),
  quantity: Type.Number(),
  billedQuantity: Type.Number(),
  startReading: Type.Union([Type.Number(), Type.Null()]),
  endReading: Type.Union([Type.Number(), Type.Null()]),
  intervals: Type.Integer(),
  missing: Type.Integer({ description: 'intervals with no data (billed at an estimate where billingEstimated says so)' }),
  estimated: Type.Integer({ description: 'intervals the collector estimated' }),
  billingEstimated: Type.Optional(
    Type.Integer({ description: 'of the missing intervals, those billed at an estimate (docs/billing.md, "Missing sub-meter data")' }),
  ),
  estimatedQuantity: Type.Optional(Type.Number({ description: "the meter's estimated quantity, before the tenant's share" })),
});
const TenantBill = Type.Object({
  ...BillFields,
  meters: Type.Array(MeterLine),
  tariffRule: Type.Optional(Type.String({ description: "where some energy is priced by the tenant's or a meter's own tariff: the rule" })),
  estimatedAmountCents: Type.Optional(Type.Integer({ description: 'how much of the statement rests on estimated sub-meter data' })),
  estimateRule: Type.Optional(Type.String({ description: 'how the missing intervals were estimated' })),
});

export const Run = Type.Object({
  id: Type.Integer(),
  periodId: Type.Integer(),
  period: Period,
  status: stringEnum(BILLING_RUN_STATUSES),
  kind: stringEnum(BILLING_RUN_KINDS),
  correctsRunId: Type.Union([Type.Integer(), Type.Null()]),
  computedAt: Timestamp,
  issuedAt: NullableTimestamp,
  issuedBy: Type.Union([Type.String(), Type.Null()]),
  summary: Type.Object({
    currency: Type.String(),
    site: Type.Object({ ...BillFields, meters: Type.Array(Type.Object({ meterId: Type.Integer(), name: Type.String(), utility: Utility })) }),
    landlord: Bill,
    quality: Type.Object({
      intervals: Type.Integer(),
      missing: Type.Integer(),
      estimated: Type.Integer(),
      missingPercent: Type.Number(),
      estimatedPercent: Type.Number(),
      billingEstimated: Type.Optional(Type.Integer({ description: 'of the missing intervals, those of split sub-meters billed at an estimate' })),
    }),
    reconciliation: Type.Object({ siteTotalCents: Cents, statementsCents: Cents, landlordCents: Cents }),
  }),
  statements: Type.Array(Type.Object({ id: Type.Integer(), tenantId: Type.Integer(), tenantName: Type.String(), totalCents: Cents })),
});

export const Statement = Type.Object({
  id: Type.Integer(),
  runId: Type.Integer(),
  status: stringEnum(BILLING_RUN_STATUSES),
  kind: stringEnum(BILLING_RUN_KINDS),
  tenant: Type.Object({
    id: Type.Integer(),
    name: Type.String(),
    kind: stringEnum(BILLED_PARTY_KINDS),
    contactEmail: Type.Union([Type.String(), Type.Null()]),
  }),
  period: Period,
  currency: Type.String(),
  totalCents: Cents,
  content: TenantBill,
  difference: Type.Union([
    Type.Object({
      correctsStatementId: Type.Union([Type.Integer(), Type.Null()]),
      totalCents: Cents,
      energy: Type.Array(Type.Object({ utility: Utility, band: Type.String(), quantity: Type.Number(), amountCents: Cents })),
      standingCents: Cents,
      demandCents: Cents,
    }),
    Type.Null(),
  ]),
});

const Figure = (description: string) => Type.Number({ minimum: 0, maximum: 1e9, description });
const BandQuantities = Type.Record(Type.String({ minLength: 1, maxLength: 40 }), Type.Number({ minimum: 0, maximum: 1e9 }), {
  description: 'quantity per time-of-use band as billed (kWh; gas in kWh too); absent: summed from the energy lines',
});
const BillLineFields = {
  kind: stringEnum(SUPPLIER_BILL_LINE_KINDS, {
    description:
      "energy: a band's kWh × rate; standing: days × rate per day; demand: kW × rate per kW; tax: a tax or levy (base × rate); adjustment: a credit or charge as printed",
  }),
  description: Type.Optional(Type.String({ maxLength: 200, pattern: displayTextPattern() })),
  band: Type.Optional(Type.String({ minLength: 1, maxLength: 40, description: "energy: the time-of-use band ('base' outside every band; the default)" })),
  from: Type.Optional(Type.String({ format: 'date', description: "the line's first day, within the bill (a line per tariff version, as bills print them)" })),
  to: Type.Optional(Type.String({ format: 'date', description: "the first day after the line's days" })),
  quantity: Type.Optional(Figure('energy: kWh; standing: days; demand: kW; tax: its base')),
  rate: Type.Optional(Figure('per unit of the quantity, in the site currency')),
  amount: Type.Number({
    minimum: -1e9,
    maximum: 1e9,
    description: "the line's money as printed; below 0 only for an adjustment (a credit)",
  }),
};
const BillLine = Type.Object(BillLineFields, REFUSE_UNKNOWN_FIELDS);
export const SupplierBillBody = Type.Object(
  {
    meterId: Type.Integer({ minimum: 1, description: 'the supply point: a site meter' }),
    from: Day,
    to: Type.String({ format: 'date', description: 'the first day after the bill period' }),
    reference: Type.Optional(Type.String({ maxLength: 120, pattern: displayTextPattern() })),
    bands: Type.Optional(BandQuantities),
    billedKw: Type.Optional(Type.Union([Figure("billed kW (absent: the demand lines' highest)"), Type.Null()])),
    standingCharges: Type.Optional(Figure("absent: the standing lines' sum")),
    total: Type.Number({
      minimum: -1e9,
      maximum: 1e9,
      description: 'the total as printed (stored even when the lines do not add up to it: that is a finding)',
    }),
    calorificValue: Type.Optional(Type.Union([Type.Number({ exclusiveMinimum: 0, maximum: 100 }), Type.Null()])),
    lines: Type.Optional(Type.Array(BillLine, { maxItems: 200, description: 'the lines as printed, each audited on its own' })),
    startReading: Type.Optional(Type.Union([Figure("the supply meter's register at the start, as printed"), Type.Null()])),
    endReading: Type.Optional(Type.Union([Figure("the supply meter's register at the end, as printed"), Type.Null()])),
  },
  REFUSE_UNKNOWN_FIELDS,
);
const StoredLine = Type.Object({
  kind: stringEnum(SUPPLIER_BILL_LINE_KINDS),
  description: Type.Optional(Type.String()),
  band: Type.Optional(Type.String()),
  from: Type.Optional(Type.String()),
  to: Type.Optional(Type.String()),
  quantity: Type.Optional(Type.Number()),
  rate: Type.Optional(Type.Number()),
  amount: Type.Number(),
});
export const SupplierBill = Type.Object({
  id: Type.Integer(),
  meterId: Type.Integer(),
  from: Day,
  to: Day,
  reference: Type.String(),
  bands: Type.Record(Type.String(), Type.Number()),
  billedKw: Type.Union([Type.Number(), Type.Null()]),
  standingCharges: Type.Number(),
  total: Type.Number(),
  calorificValue: Type.Union([Type.Number(), Type.Null()]),
  lines: Type.Array(StoredLine),
  startReading: Type.Union([Type.Number(), Type.Null()]),
  endReading: Type.Union([Type.Number(), Type.Null()]),
  createdAt: Timestamp,
  createdBy: Type.Union([Type.String(), Type.Null()]),
});
const Nullable = Type.Union([Type.Number(), Type.Null()]);
const AuditItem = Type.Object({
  check: stringEnum(AUDIT_CHECKS),
  line: Type.String({ description: 'the line as printed ("line 2: energy peak 2026-10-16 – 2026-11-01"), or "bill" for a bill-level check' }),
  lineIndex: Type.Union([Type.Integer(), Type.Null()]),
  unit: Type.String(),
  expected: Nullable,
  billed: Nullable,
  difference: Nullable,
  moneyAtStake: Type.Union([Type.Number(), Type.Null()], { description: 'what the difference is worth in money (positive: billed too much)' }),
  tolerance: Type.String(),
  flagged: Type.Boolean(),
  message: Type.String(),
});
export const BillCheck = Type.Object({
  bill: SupplierBill,
  tolerancePercent: Type.Number(),
  flagged: Type.Boolean({ description: 'some line differs from the shadow bill by more than the tolerance, or the audit has a finding' }),
  lines: Type.Array(
    Type.Object({ line: Type.String(), billed: Nullable, shadow: Nullable, difference: Nullable, differencePercent: Nullable, flagged: Type.Boolean() }),
  ),
  missingIntervals: Type.Integer({ description: "intervals of the bill's period the meter has no data for (the shadow counts them as 0)" }),
  audit: Type.Array(AuditItem, { description: 'every check of the line-by-line audit, flagged or not (docs/billing.md, "The audit\'s checks")' }),
  findings: Type.Array(AuditItem, { description: "the audit's flagged checks" }),
});

export const BudgetBody = Type.Object(
  {
    year: Type.Integer({ minimum: 2000, maximum: 2100 }),
    utility: Utility,
    scope: stringEnum(BUDGET_SCOPES),
    target: Type.Optional(Type.String({ maxLength: 120, description: "the area's name or the cost centre's id; none for the site" })),
    unit: Type.String({ maxLength: 10, description: "the utility's unit: kWh for electricity and heat, m³ for gas and water" }),
    quantity: Type.Number({ minimum: 0 }),
    amount: Type.Number({ minimum: 0, description: 'money in the site currency' }),
    phasing: Type.Optional(stringEnum(BUDGET_PHASINGS)),
    marginPercent: Type.Optional(Type.Number({ minimum: 0, maximum: 100 })),
  },
  { additionalProperties: false },
);
export const Budget = Type.Object({
  id: Type.Integer(),
  year: Type.Integer(),
  utility: Utility,
  scope: stringEnum(BUDGET_SCOPES),
  target: Type.String(),
  unit: Type.String(),
  quantity: Type.Number(),
  amount: Type.Number(),
  phasing: stringEnum(BUDGET_PHASINGS),
  marginPercent: Type.Number(),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
const NullableNumber = Type.Union([Type.Number(), Type.Null()]);
export const BudgetStatus = Type.Object({
  budget: Budget,
  at: Day,
  phasingUsed: stringEnum(BUDGET_PHASINGS),
  months: Type.Array(
    Type.Object({
      month: Type.String(),
      budgetQuantity: Type.Number(),
      budgetAmount: Type.Number(),
      actualQuantity: Type.Union([Type.Number(), Type.Null()], {
        description: 'null: the month has not begun or its meters recorded nothing (no data, never 0)',
      }),
      actualAmount: Type.Union([Type.Number(), Type.Null()], { description: 'the whole bill of the month so far: energy + standing + demand charges' }),
      lastYearQuantity: Type.Number(),
      data: stringEnum(['measured', 'no_data', 'future'] as const),
      charges: Type.Union([Type.Object({ energy: Type.Number(), standing: Type.Number(), demand: Type.Number() }), Type.Null()]),
    }),
  ),
  ytd: Type.Object({
    quantity: Type.Number(),
    amount: Type.Number({ description: 'the whole bill: energy + standing + demand' }),
    budgetQuantity: Type.Number(),
    budgetAmount: Type.Number(),
    energy: Type.Number(),
    standing: Type.Number(),
    demand: Type.Number(),
  }),
  forecast: Type.Object({
    quantity: Type.Number(),
    amount: Type.Number(),
    quantityPercentOfBudget: Type.Number(),
    amountPercentOfBudget: Type.Number(),
    available: Type.Boolean({ description: 'false: no forecast could be made (then no alert); methodNote says why' }),
    method: stringEnum(['weather_normalised_baseline', 'last_year_scaled_to_run_rate', 'run_rate', 'last_year', 'none'] as const),
    methodNote: Type.String(),
  }),
  alert: Type.Boolean(),
  message: Type.String(),
});
export const AtQuery = Type.Object({ at: Type.Optional(Day) }, { additionalProperties: false });

export const MeasureBody = Type.Object(
  {
    name: Name,
    description: Type.Optional(Type.String({ maxLength: 2000 })),
    meterId: Type.Optional(Type.Union([Type.Integer({ minimum: 1 }), Type.Null()])),
    area: Type.Optional(Type.Union([Type.String({ maxLength: 120 }), Type.Null()])),
    installedOn: Day,
    cost: Type.Optional(Type.Number({ minimum: 0 })),
    baselineFrom: Day,
    baselineTo: Type.String({ format: 'date', description: 'the day after the baseline period (at least 30 days with data)' }),
    temperatureCode: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    heatingBaseC: Type.Optional(Type.Number({ minimum: -30, maximum: 40 })),
    coolingBaseC: Type.Optional(Type.Number({ minimum: -30, maximum: 40 })),
    method: Type.Optional(
      stringEnum(['ems', 'caltrack-daily', 'caltrack-hourly'] as const, {
        description: "the baseline model, as GET /api/analysis/baseline's method (default 'ems')",
      }),
    ),
  },
  { additionalProperties: false },
);
const Adjustment = Type.Object({ from: Day, to: Day, kwh: Type.Number(), reason: Type.String() });
export const AdjustmentBody = Type.Object(
  {
    from: Day,
    to: Type.String({ format: 'date' }),
    kwh: Type.Number({ description: 'energy added to the baseline over [from, to) (negative: removed)' }),
    reason: Type.String({ minLength: 3, maxLength: 500 }),
  },
  { additionalProperties: false },
);
export const Measure = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  description: Type.String(),
  meterId: Type.Union([Type.Integer(), Type.Null()]),
  area: Type.Union([Type.String(), Type.Null()]),
  option: stringEnum(['B', 'C'] as const),
  installedOn: Day,
  cost: Type.Number(),
  baselineFrom: Day,
  baselineTo: Day,
  temperatureCode: Type.String(),
  heatingBaseC: Type.Number(),
  coolingBaseC: Type.Number(),
  method: stringEnum(['ems', 'caltrack-daily', 'caltrack-hourly'] as const),
  adjustments: Type.Array(Adjustment),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
export const PeriodQuery = Type.Object({ from: Type.Optional(Day), to: Type.Optional(Day) }, { additionalProperties: false });
export const Savings = Type.Object({
  measure: Measure,
  option: stringEnum(['B', 'C'] as const),
  baseline: Type.Object({ from: Day, to: Day, statistics: Type.Unknown(), model: Type.Unknown() }),
  guardRails: Type.Object(
    { checks: Type.Unknown(), uncertainty: Type.Unknown() },
    { description: "the checks and the uncertainty of GET /api/analysis/baseline's guardRails for the same model and period" },
  ),
  report: Type.Object({
    from: Day,
    to: Day,
    days: Type.Integer(),
    missingDays: Type.Integer(),
    daysOutsideBaselineConditions: Type.Integer({
      description: 'reporting days with degree days outside the range of the baseline days: the model extrapolates there, beyond what its uncertainty covers',
    }),
    expectedKwh: Type.Number(),
    nonRoutineKwh: Type.Number(),
    adjustedBaselineKwh: Type.Number(),
    actualKwh: Type.Number(),
    partialDays: Type.Integer({ description: 'reporting days with some intervals but not all: not counted (whole days only)' }),
    verifiable: Type.Boolean({ description: 'the guard rails of GET /api/analysis/baseline hold for this baseline and period (else no figure: reasons)' }),
    significant: Type.Union([Type.Boolean(), Type.Null()], {
      description: 'the fractional savings uncertainty is at most 50 % at 68 % (G14); null when not verifiable',
    }),
    reasons: Type.Array(Type.String(), { description: 'why the figure is withheld or not significant, in plain words' }),
    avoidedKwh: Type.Union([Type.Number(), Type.Null()], { description: 'adjusted baseline − actual; null when not verifiable' }),
    uncertaintyKwh: Type.Number({ description: "half-width of the 90 % interval (G14 Annex B, lag-1 autocorrelation corrected: the baseline API's at90)" }),
    confidence: Type.Number(),
    relativePrecisionPercent: NullableNumber,
    pricePerKwh: Type.Number(),
    avoidedCost: NullableNumber,
    uncertaintyCost: Type.Number(),
    paybackYears: NullableNumber,
  }),
});

const NullableDay = Type.Union([Day, Type.Null()]);
export const SiteSavings = Type.Object({
  items: Type.Array(
    Type.Object({
      id: Type.Integer(),
      name: Type.String(),
      option: stringEnum(['B', 'C'] as const),
      from: NullableDay,
      to: NullableDay,
      avoidedKwh: NullableNumber,
      uncertaintyKwh: NullableNumber,
      avoidedCost: NullableNumber,
      uncertaintyCost: NullableNumber,
      paybackYears: NullableNumber,
      status: stringEnum(['significant', 'not significant', 'not verifiable', 'not evaluated'] as const),
      counted: Type.Boolean({ description: 'in the total: only verifiable, significant savings are' }),
      reasons: Type.Array(Type.String()),
      error: Type.Union([Type.String(), Type.Null()], { description: 'why the measure could not be evaluated (then it is not summed)' }),
    }),
  ),
  total: Type.Object({
    measures: Type.Integer(),
    avoidedKwh: Type.Number(),
    uncertaintyKwh: Type.Number({ description: "the measures' uncertainties in quadrature" }),
    avoidedCost: Type.Number(),
    uncertaintyCost: Type.Number(),
    confidence: Type.Number(),
  }),
  apart: Type.Object(
    { notSignificant: Type.Integer(), notVerifiable: Type.Integer(), notEvaluated: Type.Integer() },
    { description: 'measures listed but not summed, by why' },
  ),
});
export const MeasureCreated = Type.Object({
  ...Measure.properties,
  baseline: Type.Object(
    { verifiable: Type.Boolean(), reasons: Type.Array(Type.String()) },
    { description: 'the guard rails of the baseline alone (length, coverage, fit): a measure that fails them is kept, its savings not verifiable' },
  ),
});

const Clock = Type.String({ pattern: '^([01]\\d|2[0-3]):[0-5]\\d$|^24:00$', description: 'HH:MM, local time; 24:00 ends a band at midnight' });
const OwnBand = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 40 }),
    days: Type.Array(stringEnum(WEEKDAYS), { minItems: 1, uniqueItems: true, maxItems: WEEKDAYS.length }),
    from: Clock,
    to: Clock,
    price: Type.Number({ minimum: 0, maximum: 1e6 }),
  },
  REFUSE_UNKNOWN_FIELDS,
);
export const OwnTariffBody = Type.Object(
  {
    tenantId: Type.Optional(Type.Union([Type.Integer({ minimum: 1 }), Type.Null()], { description: "a tenant's own tariff: its share of every meter" })),
    meterId: Type.Optional(Type.Union([Type.Integer({ minimum: 1 }), Type.Null()], { description: "a meter's own tariff: every tenant's share of it" })),
    commodity: Type.Optional(
      stringEnum(COMMODITIES, { description: 'electricity (default), gas (price per kWh through the calorific value in force), water or heat' }),
    ),
    validFrom: Day,
    price: Type.Number({ minimum: 0, maximum: 1e6, description: 'per unit outside every band' }),
    bands: Type.Optional(Type.Array(OwnBand, { maxItems: 50, description: 'time-of-use bands (electricity); the first that covers an interval prices it' })),
    holidays: Type.Optional(Type.Array(Day, { maxItems: 400 })),
    standingChargePerDay: Type.Optional(
      Type.Number({ minimum: 0, maximum: 1e7, description: "a tenant's own standing charge, instead of its share of the site's" }),
    ),
    note: Type.Optional(Type.String({ maxLength: 500 })),
  },
  REFUSE_UNKNOWN_FIELDS,
);
export const OwnTariff = Type.Object({
  id: Type.Integer(),
  tenantId: Type.Union([Type.Integer(), Type.Null()]),
  meterId: Type.Union([Type.Integer(), Type.Null()]),
  commodity: Utility,
  validFrom: Day,
  price: Type.Number(),
  bands: Type.Array(Type.Object({ name: Type.String(), days: Type.Array(Type.String()), from: Type.String(), to: Type.String(), price: Type.Number() })),
  holidays: Type.Array(Type.String()),
  standingChargePerDay: Type.Number(),
  note: Type.String(),
  createdAt: Timestamp,
  createdBy: Type.Union([Type.String(), Type.Null()]),
});
