// /api/billing: tenants and cost centres, meter splits, billing periods, runs and statements (PDF, XLSX, mailed on issue).
// Viewers read; admins set up tenants, splits, rules and periods, run and issue.
import type { AlertService } from '../facility/index.ts';
import { Type } from '@sinclair/typebox';
import { setAttachment } from '../platform/http/attachment.ts';
import { defineRoute, Reply } from '../platform/http/route.ts';
import { ErrorBody, IdParams } from '../platform/http/schemas.ts';
import { PayloadTooLarge, UnsupportedMediaType } from '../platform/errors.ts';
import type { IncomingMessage } from 'node:http';
import type { Logger } from '../platform/logger.ts';
import type { Mailer } from '../platform/mail/mailer.ts';
import { statementFileName, statementPdf, statementTitle, statementXlsx } from './documents.ts';
import {
  SiteSavings,
  Budget,
  BudgetBody,
  AdjustmentBody,
  AtQuery,
  BudgetStatus,
  Measure,
  MeasureCreated,
  MeasureBody,
  PeriodQuery,
  Savings,
  Allocation,
  AllocationBody,
  BillCheck,
  SupplierBill,
  SupplierBillBody,
  MeterParams,
  Period,
  PeriodCreate,
  Run,
  Settings,
  SettingsBody,
  OwnTariff,
  OwnTariffBody,
  Statement,
  Tenant,
  TenantCreate,
  TenantUpdate,
} from './schemas.ts';
import type { Billing } from './service.ts';
import { siteSavings, type Measures } from './savings.ts';
import { BUDGET_ALERT_CODE, type Budgets } from './budgets.ts';
import type { SupplierBills } from './supplierBills.ts';
import type { OwnTariffs } from './ownTariffs.ts';
import { CALCULATION_DOC } from './calculation.ts';

const tags = ['billing'];
const XLSX = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';

const MAX_CSV_BYTES = 1024 * 1024;

/** The request body as UTF-8 text, refused past `limit` bytes. */
async function readText(req: IncomingMessage, limit: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) throw new PayloadTooLarge(`A bill file is at most ${limit} bytes`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** Mails each statement of an issued run with a contact, PDF and XLSX attached; a failure is logged, the run stays issued. */
async function mailStatements(billing: Billing, runId: number, mailer: Mailer, logger: Logger): Promise<void> {
  try {
    for (const { id } of billing.run(runId).statements) {
      const statement = billing.statement(id);
      if (!statement.tenant.contactEmail) continue;
      await mailer.send({
        to: statement.tenant.contactEmail,
        subject: statementTitle(statement),
        text: `${statementTitle(statement)}\nTotal: ${(statement.totalCents / 100).toFixed(2)} ${statement.currency}\n\nThe statement is attached as PDF and XLSX.`,
        attachments: [
          { filename: statementFileName(statement, 'pdf'), content: await statementPdf(statement), contentType: 'application/pdf' },
          { filename: statementFileName(statement, 'xlsx'), content: await statementXlsx(statement), contentType: XLSX },
        ],
      });
    }
  } catch (error) {
    // The run stays issued; its statements can be downloaded and sent by hand.
    logger.error({ err: error, runId }, 'billing statements could not all be mailed');
  }
}

export type BillingRouteNeeds = {
  billing: { statements: Billing; supplierBills: SupplierBills; budgets: Budgets; measures: Measures; tariffs: OwnTariffs };
  mailer: Mailer;
  logger: Logger;
  alerts: Pick<AlertService, 'fromGatewayAlarm'>;
};

export function billingRoutes({ billing: feature, mailer, logger, alerts }: BillingRouteNeeds) {
  const billing = feature.statements;
  const { supplierBills, budgets, measures } = feature;
  return [
    defineRoute({
      method: 'GET',
      path: '/api/billing/tenants',
      access: 'viewer',
      summary: 'Tenants and cost centres billed for energy',
      description: 'Every tenant and cost centre, by name, with its contact and floor area. Changes nothing.',
      tags,
      schemas: { response: { 200: Type.Object({ items: Type.Array(Tenant) }) } },
      handler: () => ({ items: billing.tenants() }),
    }),
    defineRoute({
      method: 'POST',
      path: '/api/billing/tenants',
      access: 'admin',
      summary: 'Add a tenant or cost centre',
      description: 'Admin only; audited. Names are unique case-insensitively (409). floorAreaM2 is the key of meters split by floor area.',
      example: { name: 'Café Nord', kind: 'tenant', contactEmail: 'accounts@cafe-nord.example', floorAreaM2: 120 },
      tags,
      schemas: { body: TenantCreate, response: { 201: Tenant, 400: ErrorBody, 409: ErrorBody } },
      handler: ({ body, user }) => new Reply(201, billing.createTenant(body, user)),
    }),
    defineRoute({
      method: 'PATCH',
      path: '/api/billing/tenants/:id',
      access: 'admin',
      summary: 'Change a tenant or cost centre',
      description: 'Admin only; audited. Issued statements keep what they were issued with.',
      example: { floorAreaM2: 140 },
      tags,
      schemas: { params: IdParams, body: TenantUpdate, response: { 200: Tenant, 400: ErrorBody, 404: ErrorBody, 409: ErrorBody } },
      handler: ({ params, body, user }) => billing.updateTenant(params.id, body, user),
    }),
    defineRoute({
      method: 'GET',
      path: '/api/billing/allocations',
      access: 'viewer',
      summary: "Each billed meter's split between tenants, with the fractions it gives and the landlord's rest",
      description:
        'Each split meter: its method, the shares as entered, and the fraction of its energy each tenant and the landlord takes now. Changes nothing.',
      tags,
      schemas: { response: { 200: Type.Object({ items: Type.Array(Allocation) }) } },
      handler: () => ({ items: billing.allocations() }),
    }),
    defineRoute({
      method: 'PUT',
      path: '/api/billing/allocations/:meterId',
      access: 'admin',
      summary: "Set how a meter's energy is split: by percentage, by floor area (common areas) or by a fixed key",
      description:
        "Admin only; audited. percent: the tenants' values and landlordValue must add up to 100 (else 400 with the sum). floor_area: each tenant's share is its floorAreaM2 ÷ " +
        "(the listed tenants' floor areas + landlordValue, the vacant m²), taken when a run is computed. fixed_key: value ÷ (Σ values + landlordValue). " +
        "Only consumption is split: an export or generation meter is 400. What no tenant takes is the landlord's. " +
        'A meter whose energy another split meter already holds (a sub-meter beneath a split supply meter, the supply above a split sub-meter, ' +
        'virtual meters sharing a term) is 409 naming both meters: the same energy is never billed twice (docs/billing.md, "The meter tree").',
      example: {
        method: 'percent',
        shares: [
          { tenantId: 1, value: 60 },
          { tenantId: 2, value: 30 },
        ],
        landlordValue: 10,
      },
      tags,
      schemas: { params: MeterParams, body: AllocationBody, response: { 200: Allocation, 400: ErrorBody, 404: ErrorBody, 409: ErrorBody } },
      handler: ({ params, body, user }) => billing.putAllocation(params.meterId, body, user),
    }),
    defineRoute({
      method: 'DELETE',
      path: '/api/billing/allocations/:meterId',
      access: 'admin',
      summary: 'Stop splitting a meter between tenants',
      description: 'Admin only; audited. Later runs no longer bill the meter to anyone; issued statements keep it.',
      tags,
      schemas: { params: MeterParams, response: { 204: Type.Null(), 404: ErrorBody } },
      handler: ({ params, user }) => {
        billing.deleteAllocation(params.meterId, user);
        return new Reply(204, null);
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/api/billing/settings',
      access: 'viewer',
      summary: "The site's billing rules: how much missing or estimated data a run may have and still be issued",
      description:
        "maxMissingPercent and maxEstimatedPercent bound the share of a run's metered intervals that may lack data or be estimated for it to be issued; supplierBillTolerancePercent flags supplier bill lines; " +
        "billAudit holds the supplier-bill audit's tolerance of each check. Changes nothing.",
      tags,
      schemas: { response: { 200: Settings } },
      handler: () => billing.settings(),
    }),
    defineRoute({
      method: 'PUT',
      path: '/api/billing/settings',
      access: 'admin',
      summary: "Replace the site's billing rules",
      description: 'Admin only; audited. billAudit may name some checks only: the others keep their tolerance.',
      example: { maxMissingPercent: 0.5, maxEstimatedPercent: 5, supplierBillTolerancePercent: 2, billAudit: { ratePercent: 0.1, yearOnYearPercent: 25 } },
      tags,
      schemas: { body: SettingsBody, response: { 200: Settings, 400: ErrorBody } },
      handler: ({ body, user }) => billing.putSettings(body, user),
    }),
    defineRoute({
      method: 'GET',
      path: '/api/billing/tariffs',
      access: 'viewer',
      summary: "Tenants' and meters' own tariffs (dated versions), oldest first",
      description:
        "A tenant's own tariff prices its share of every meter; a meter's prices every tenant's share of it; else the site's tariff does. " +
        'Changes nothing.',
      tags,
      schemas: { response: { 200: Type.Object({ items: Type.Array(OwnTariff) }) } },
      handler: () => ({ items: feature.tariffs.list() }),
    }),
    defineRoute({
      method: 'POST',
      path: '/api/billing/tariffs',
      access: 'admin',
      summary: 'Give a tenant or a meter a tariff of its own from a day',
      description:
        "Admin only; audited. Exactly one of tenantId and meterId. Statements price each tenant's energy by its own version in force each day, else the meter's, " +
        "else the site's; the landlord's share is what the supplier's bill leaves. A tenant's standingChargePerDay replaces its share of the site's on those days; " +
        "a meter's tariff has none. May be back-dated: issued statements never change, the next run of an issued period restates it. Gas: price per kWh, each day's m³ × the calorific value in force; no bands (400). " +
        'The same party, utility and validFrom twice is 409; unknown fields are refused.',
      example: {
        tenantId: 1,
        validFrom: '2027-01-01',
        price: 0.22,
        bands: [{ name: 'peak', days: ['mon', 'tue', 'wed', 'thu', 'fri'], from: '08:00', to: '20:00', price: 0.3 }],
        standingChargePerDay: 0.5,
        note: 'Contract 2027-14',
      },
      tags,
      schemas: { body: OwnTariffBody, response: { 201: OwnTariff, 400: ErrorBody, 409: ErrorBody } },
      handler: ({ body, user }) => new Reply(201, feature.tariffs.create(body, user)),
    }),
    defineRoute({
      method: 'DELETE',
      path: '/api/billing/tariffs/:id',
      access: 'admin',
      summary: "Remove a tenant's or meter's own tariff version",
      description: 'Admin only; audited. Issued statements keep what they were issued with.',
      tags,
      schemas: { params: IdParams, response: { 204: Type.Null(), 404: ErrorBody } },
      handler: ({ params, user }) => {
        feature.tariffs.delete(params.id, user);
        return new Reply(204, null);
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/api/billing/periods',
      access: 'viewer',
      summary: 'Billing periods, oldest first',
      description: 'Every billing period [from, to) of site days; periods never overlap. Changes nothing.',
      tags,
      schemas: { response: { 200: Type.Object({ items: Type.Array(Period) }) } },
      handler: () => ({ items: billing.periods() }),
    }),
    defineRoute({
      method: 'POST',
      path: '/api/billing/periods',
      access: 'admin',
      summary: 'Add a billing period [from, to) of site days',
      description: 'Admin only; audited. At most 366 days; a period overlapping another is 400 naming it.',
      example: { name: 'January 2027', from: '2027-01-01', to: '2027-02-01' },
      tags,
      schemas: { body: PeriodCreate, response: { 201: Period, 400: ErrorBody } },
      handler: ({ body, user }) => new Reply(201, billing.createPeriod(body, user)),
    }),
    defineRoute({
      method: 'GET',
      path: '/api/billing/periods/:id/runs',
      access: 'viewer',
      summary: "A period's billing runs (issued ones and the draft), oldest first",
      description: 'The issued runs of the period (the first, then each restatement) and its draft, if any, each with its statements. Changes nothing.',
      tags,
      schemas: { params: IdParams, response: { 200: Type.Object({ items: Type.Array(Run) }), 404: ErrorBody } },
      handler: ({ params }) => ({ items: billing.runs(params.id) }),
    }),
    defineRoute({
      method: 'POST',
      path: '/api/billing/periods/:id/runs',
      access: 'admin',
      summary: "Compute the period's draft run: a statement per tenant, the site's bill and the landlord's share",
      description:
        `Admin only; audited. A period has at most one draft: running it again (or twice at once) recomputes that draft in place, so there is one statement set. ` +
        `After an issued run the draft is a restatement: each statement carries its difference to the one issued. ${CALCULATION_DOC}`,
      tags,
      schemas: { params: IdParams, response: { 200: Run, 400: ErrorBody, 404: ErrorBody, 409: ErrorBody } },
      handler: ({ params, user }) => billing.runPeriod(params.id, user),
    }),
    defineRoute({
      method: 'GET',
      path: '/api/billing/runs/:id',
      access: 'viewer',
      summary: 'A billing run: the site bill, the landlord share, data quality, the reconciliation and its statements',
      description:
        "The site's bill line by line, the landlord's share (the site's bill less the statements), how many intervals were missing or estimated, and each statement's total. Changes nothing.",
      tags,
      schemas: { params: IdParams, response: { 200: Run, 404: ErrorBody } },
      handler: ({ params }) => billing.run(params.id),
    }),
    defineRoute({
      method: 'POST',
      path: '/api/billing/runs/:id/issue',
      access: 'admin',
      summary: 'Issue a draft run: its statements become final and are mailed to each tenant contact (PDF and XLSX)',
      description:
        "Admin only; audited. Refused (400, saying how many intervals are missing or estimated) where the run's data passes the site's rules (GET /api/billing/settings). " +
        'An issued run never changes (409 when issued again); a later run of the period is a restatement.',
      tags,
      schemas: { params: IdParams, response: { 200: Run, 400: ErrorBody, 404: ErrorBody, 409: ErrorBody } },
      handler: ({ params, user }) => {
        const run = billing.issue(params.id, user);
        void mailStatements(billing, run.id, mailer, logger);
        return run;
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/api/billing/statements/:id',
      access: 'viewer',
      summary: "A tenant's statement: energy per utility and band, standing and demand charges, carbon, each meter with its readings",
      description: "One tenant's statement; a restatement's carries its difference to the statement it corrects. Changes nothing.",
      tags,
      schemas: { params: IdParams, response: { 200: Statement, 404: ErrorBody } },
      handler: ({ params }) => billing.statement(params.id),
    }),
    defineRoute({
      method: 'GET',
      path: '/api/billing/statements/:id/pdf',
      access: 'viewer',
      summary: 'A statement as PDF',
      description:
        'The statement as an A4 PDF (the lines, the rules of the shared charges, each meter with its readings), as mailed when the run is issued. Changes nothing.',
      tags,
      raw: { contentType: 'application/pdf' },
      schemas: { params: IdParams, response: { 200: Type.String({ description: 'PDF' }), 404: ErrorBody } },
      handler: async ({ params, ctx }) => {
        const statement = billing.statement(params.id);
        const body = await statementPdf(statement);
        setAttachment(ctx, statementFileName(statement, 'pdf'));
        ctx.type = 'application/pdf';
        ctx.body = body;
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/api/billing/statements/:id/xlsx',
      access: 'viewer',
      summary: 'A statement as XLSX',
      description: 'The statement as a spreadsheet with the same sections as the PDF. Changes nothing.',
      tags,
      raw: { contentType: XLSX },
      schemas: { params: IdParams, response: { 200: Type.String({ description: 'XLSX' }), 404: ErrorBody } },
      handler: async ({ params, ctx }) => {
        const statement = billing.statement(params.id);
        const body = await statementXlsx(statement);
        setAttachment(ctx, statementFileName(statement, 'xlsx'));
        ctx.type = XLSX;
        ctx.body = body;
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/api/billing/supplier-bills',
      access: 'viewer',
      summary: "The supplier's bills entered or imported, newest period first (at most 500)",
      description:
        'The bills as entered, with their supply point, period, band quantities, billed kW, standing charges, total and calorific value. Changes nothing.',
      tags,
      schemas: { response: { 200: Type.Object({ items: Type.Array(SupplierBill) }) } },
      handler: () => ({ items: supplierBills.list() }),
    }),
    defineRoute({
      method: 'POST',
      path: '/api/billing/supplier-bills',
      access: 'operator',
      summary: "Enter a supplier's bill for a supply point and check it against the shadow bill from the meters",
      description:
        'Operator or admin; audited. Answers the check as GET …/check does: each summary figure (kWh per band, gas kWh and calorific value, standing charges, billed kW, total) ' +
        "against EMS's figures for the same meter and days, flagged beyond the site's supplierBillTolerancePercent, and the line-by-line audit of the printed lines (see …/check). " +
        'A bill whose lines do not add up to its total is stored, with that finding. Unknown fields are refused (400 naming the field), not dropped; a quantity, rate or ' +
        'amount below 0 (an adjustment may be a credit) or beyond 10⁹ is 400 naming the field.',
      example: {
        meterId: 1,
        from: '2027-01-01',
        to: '2027-02-01',
        reference: 'INV-2027-001',
        total: 2477.12,
        startReading: 120450,
        endReading: 129750,
        lines: [
          { kind: 'energy', band: 'peak', quantity: 5200, rate: 0.3, amount: 1560 },
          { kind: 'energy', band: 'base', quantity: 4100, rate: 0.2, amount: 820 },
          { kind: 'standing', quantity: 31, rate: 1, amount: 31 },
          { kind: 'demand', quantity: 48, rate: 4, amount: 192 },
          { kind: 'tax', description: 'Energy levy', quantity: 9300, rate: 0.0016, amount: 14.88 },
          { kind: 'adjustment', description: 'Credit for December', amount: -140.76 },
        ],
      },
      tags,
      schemas: { body: SupplierBillBody, response: { 201: BillCheck, 400: ErrorBody } },
      handler: ({ body, user }) => new Reply(201, supplierBills.create(body, user)),
    }),
    defineRoute({
      method: 'POST',
      path: '/api/billing/supplier-bills/import',
      access: 'operator',
      summary: "Import supplier's bills from CSV; a bad row refuses the file naming its line, and nothing is written",
      description:
        'Operator or admin; audited. Header: meterId,from,to,total and optionally reference,billedKw,standingCharges,calorificValue,startReading,endReading and one kwh:<band> column per band ' +
        '(e.g. kwh:peak,kwh:base; gas: kwh:base). Or printed lines, one row per line: a kind column (energy, standing, demand, tax, adjustment) with amount and optionally ' +
        "band,description,lineFrom,lineTo,quantity,rate; rows are grouped into bills by reference (required), the bill's fields on its first row (repeated ones must agree); " +
        'a bad line is named by its row (line 5.quantity). At most 1,000 bills and 1 MiB. Answers each imported bill with its check.',
      rawBody: { contentType: 'text/csv' },
      tags,
      schemas: { response: { 201: Type.Object({ items: Type.Array(BillCheck) }), 400: ErrorBody, 413: ErrorBody, 415: ErrorBody } },
      handler: async ({ user, ctx }) => {
        if (!ctx.is('text/csv', 'text/plain')) throw new UnsupportedMediaType('Send the CSV as the body (Content-Type: text/csv)');
        return new Reply(201, { items: supplierBills.importCsv(await readText(ctx.req, MAX_CSV_BYTES), user) });
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/api/billing/supplier-bills/:id/check',
      access: 'viewer',
      summary: 'A supplier bill against the shadow bill worked out from the meters and the dated tariffs, line by line',
      description:
        "Shadow bill: the meter's intervals in [from, to) per time-of-use band (gas m³ × the calorific value in force each day = kWh), the standing charges of those days, " +
        "for a site electricity meter the month's billed kW and demand charge × the period's share of the month, and the total of them. " +
        'A line is flagged when |billed − shadow| > tolerance % × |shadow| (any difference where the shadow is 0). ' +
        'audit: every printed line checked on its own (energy: kWh against the meters in its band and days, rate against the tariff in force, amount = quantity × rate; ' +
        'standing: days, rate per day, amount; demand: kW against the intervals, rate per kW, amount; tax: amount = base × rate; adjustment: listed), the total against ' +
        "the sum of the lines, and the bill against the supply's other bills and history (duplicate, overlap, missing bill, gap between readings, use against 364 days earlier). " +
        "Each names the line, expected, billed and money at stake, under billAudit's tolerance of that check; findings: the flagged ones. Changes nothing.",
      tags,
      schemas: { params: IdParams, response: { 200: BillCheck, 404: ErrorBody } },
      handler: ({ params }) => supplierBills.check(params.id),
    }),
    defineRoute({
      method: 'GET',
      path: '/api/billing/budgets',
      access: 'viewer',
      summary: 'Annual budgets per utility for the site, an area or a cost centre',
      description: "Every budget, newest year first, in the utility's unit and in money. Changes nothing.",
      tags,
      schemas: { response: { 200: Type.Object({ items: Type.Array(Budget) }) } },
      handler: () => ({ items: budgets.list() }),
    }),
    defineRoute({
      method: 'POST',
      path: '/api/billing/budgets',
      access: 'admin',
      summary: "Set an annual budget in the utility's unit and in money",
      description:
        "Admin only; audited. One per year, utility and target (409). unit must be the utility's (kWh for electricity and heat, m³ for gas and water) and the target " +
        'must have a meter of that utility (else 400 with the reason). phasing last_year spreads the budget over the months as the target used energy the year before ' +
        '(evenly by days where a month of it has no data); even by the days of each month.',
      example: { year: 2027, utility: 'electricity', scope: 'site', unit: 'kWh', quantity: 1200000, amount: 240000, phasing: 'last_year', marginPercent: 5 },
      tags,
      schemas: { body: BudgetBody, response: { 201: Budget, 400: ErrorBody, 409: ErrorBody } },
      handler: ({ body, user }) => new Reply(201, budgets.create(body, user)),
    }),
    defineRoute({
      method: 'GET',
      path: '/api/billing/budgets/:id/status',
      access: 'viewer',
      summary: 'A budget by month against the actuals, and the year-end forecast',
      description:
        'Year to date: the actual quantity and energy cost of its meters (a cost centre: its share of each split meter) up to `at` (default today). ' +
        "Forecast = year to date + the rest of the year: from the weather-normalised baseline of the 365 days before `at` (the model of GET /api/analysis/baseline, last year's weather of the same days) where it passes its guard rails, " +
        "else last year's same days scaled to this year's run rate, else the run rate (forecast.method and methodNote say which and why), in money at this year's average price so far. " +
        'alert: the forecast passes the budget (quantity or money) by more than marginPercent. Changes nothing.',
      tags,
      schemas: { params: IdParams, query: AtQuery, response: { 200: BudgetStatus, 404: ErrorBody } },
      handler: ({ params, query }) => budgets.status(params.id, query.at),
    }),
    defineRoute({
      method: 'POST',
      path: '/api/billing/budgets/check',
      access: 'operator',
      summary: 'Check the budgets of the year now and raise an alert for each forecast past its budget (the service does it hourly)',
      description: `Raises an alert (source ${BUDGET_ALERT_CODE}) once per budget and year, the first time its forecast passes it; the alert stays to be acknowledged. Answers every budget's status.`,
      tags,
      schemas: { query: AtQuery, response: { 200: Type.Object({ items: Type.Array(BudgetStatus) }) } },
      handler: async ({ query }) => ({ items: await budgets.check((alarm) => alerts.fromGatewayAlarm(alarm), query.at) }),
    }),
    defineRoute({
      method: 'GET',
      path: '/api/billing/measures',
      access: 'viewer',
      summary: 'The register of energy conservation measures',
      description: 'Every measure with its target, installation day, cost, baseline period and non-routine adjustments. Changes nothing.',
      tags,
      schemas: { response: { 200: Type.Object({ items: Type.Array(Measure) }) } },
      handler: () => ({ items: measures.list() }),
    }),
    defineRoute({
      method: 'POST',
      path: '/api/billing/measures',
      access: 'admin',
      summary: "Register a measure with its baseline period; the answer says whether the baseline passes the baseline API's guard rails",
      description:
        'Admin only; audited. Measured on a meter or an area (IPMVP Option B) or on the site meters (neither: Option C). The baseline is the daily weather and day-type model of ' +
        'GET /api/analysis/baseline over [baselineFrom, baselineTo), which must end by installedOn; 400 when it cannot be fitted (fewer than 30 whole days). A baseline that fails ' +
        'the guard rails of GET /api/analysis/baseline (length: a full calendar cycle; coverage; CV(RMSE) and net bias) is kept: baseline.verifiable is false with the reasons, ' +
        'and its savings are not verifiable (never summed). No R² rule: Guideline 14 has none.',
      example: { name: 'LED retrofit, floor 2', meterId: 3, installedOn: '2027-03-01', cost: 18000, baselineFrom: '2026-03-01', baselineTo: '2027-03-01' },
      tags,
      schemas: { body: MeasureBody, response: { 201: MeasureCreated, 400: ErrorBody, 502: ErrorBody, 504: ErrorBody } },
      handler: async ({ body, user }) => new Reply(201, await measures.create(body, user)),
    }),
    defineRoute({
      method: 'POST',
      path: '/api/billing/measures/:id/adjustments',
      access: 'admin',
      summary: 'Add a non-routine adjustment to a measure (energy added to its baseline over a period), with the reason',
      description:
        'Admin only; audited. For a change the baseline model does not know (a floor let, a process added): kWh over [from, to), prorated by the days a savings period shares with it.',
      example: { from: '2027-05-01', to: '2027-06-01', kwh: 4200, reason: 'Floor 3 let from May: new tenant load' },
      tags,
      schemas: { params: IdParams, body: AdjustmentBody, response: { 200: Measure, 400: ErrorBody, 404: ErrorBody } },
      handler: ({ params, body, user }) => measures.addAdjustment(params.id, body, user),
    }),
    defineRoute({
      method: 'GET',
      path: '/api/billing/measures/savings',
      access: 'viewer',
      summary: "The site's savings report: every measure's avoided energy and cost with its uncertainty, and their sum",
      description:
        'Each measure over its own reporting period (or from/to for all), as GET …/{id}/savings; the total counts only verifiable, significant savings (status "significant"): ' +
        'it adds their avoided energy and cost and combines their 90 % uncertainties in quadrature; the others are listed with their bands and reasons (apart counts them). ' +
        'Measures on the same meters (an Option C measure over the site and Option B measures inside it) are not deduplicated: their sum counts the overlap twice. ' +
        'A measure that cannot be evaluated is listed with the reason and not summed. Changes nothing but the kept outdoor temperatures.',
      tags,
      schemas: { query: PeriodQuery, response: { 200: SiteSavings, 502: ErrorBody, 504: ErrorBody } },
      handler: ({ query }) => siteSavings(measures, query),
    }),
    defineRoute({
      method: 'GET',
      path: '/api/billing/measures/:id/savings',
      access: 'viewer',
      summary: "A measure's verified savings: avoided energy and cost with their 90 % uncertainty, and payback",
      description:
        'Reporting period [from, to), default from installation to today. One engine with GET /api/analysis/baseline: the same model, whole days, guard rails and uncertainty. ' +
        'avoided = baseline expectation for the reporting days (routine adjustment by weather and day type) + non-routine adjustments − measured, given only when the guard rails hold (verifiable; else null with the reasons). ' +
        "Uncertainty (ASHRAE Guideline 14 Annex B, 90 %): t · 1.26 · CV · E_expected · √((n/n')(1 + 2/n')/m), n' = n(1 − ρ)/(1 + ρ) with ρ the lag-1 autocorrelation of the baseline's residuals. " +
        "Avoided cost at the period's average price of the target's meters; payback = cost ÷ (avoided cost per year). Changes nothing but the kept outdoor temperatures.",
      tags,
      schemas: { params: IdParams, query: PeriodQuery, response: { 200: Savings, 400: ErrorBody, 404: ErrorBody, 502: ErrorBody, 504: ErrorBody } },
      handler: ({ params, query }) => measures.savings(params.id, query),
    }),
  ];
}
