import { Type } from '@sinclair/typebox';
import { defineRoute, Reply } from '../platform/http/route.ts';
import { ErrorBody, IdParams } from '../platform/http/schemas.ts';
import { SiteSavings, AdjustmentBody, Measure, MeasureCreated, MeasureBody, PeriodQuery, Savings } from './schemas.ts';
import { siteSavings, type Measures } from './savings.ts';

const tags = ['billing'];

export type MeasureRouteNeeds = { billing: { measures: Measures } };

export function measureRoutes({ billing: feature }: MeasureRouteNeeds) {
  const { measures } = feature;
  return [
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
