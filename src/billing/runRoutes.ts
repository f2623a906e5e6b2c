import { Type } from '@sinclair/typebox';
import { defineRoute, Reply } from '../platform/http/route.ts';
import { ErrorBody, IdParams } from '../platform/http/schemas.ts';
import { Period, PeriodCreate, Run } from './schemas.ts';
import type { Billing } from './service.ts';
import type { StatementMail } from './statementMail.ts';
import { CALCULATION_DOC } from './bill.ts';

const tags = ['billing'];

export type RunRouteNeeds = { billing: { statements: Billing; mail: Pick<StatementMail, 'sendRun'> } };

export function runRoutes({ billing: feature }: RunRouteNeeds) {
  const billing = feature.statements;
  return [
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
        void feature.mail.sendRun(run.id);
        return run;
      },
    }),
  ];
}
