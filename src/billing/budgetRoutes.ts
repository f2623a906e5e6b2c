// /api/billing/budgets: annual budgets per utility and their year-end forecast.
import type { AlertService } from '../facility/index.ts';
import { Type } from '@sinclair/typebox';
import { defineRoute, Reply } from '../platform/http/route.ts';
import { ErrorBody, IdParams } from '../platform/http/schemas.ts';
import { Budget, BudgetBody, AtQuery, BudgetStatus } from './schemas.ts';
import { BUDGET_ALERT_CODE, type Budgets } from './budgets.ts';

const tags = ['billing'];

export type BudgetRouteNeeds = { billing: { budgets: Budgets }; alerts: Pick<AlertService, 'fromGatewayAlarm'> };

export function budgetRoutes({ billing: feature, alerts }: BudgetRouteNeeds) {
  const { budgets } = feature;
  return [
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
  ];
}
