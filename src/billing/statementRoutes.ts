import { Type } from '@sinclair/typebox';
import { setAttachment } from '../platform/http/attachment.ts';
import { defineRoute } from '../platform/http/route.ts';
import { ErrorBody, IdParams } from '../platform/http/schemas.ts';
import { statementFileName, statementPdf, statementXlsx, XLSX } from './documents.ts';
import { Statement } from './schemas.ts';
import type { Billing } from './service.ts';

const tags = ['billing'];

export type StatementRouteNeeds = { billing: { statements: Billing } };

export function statementRoutes({ billing: feature }: StatementRouteNeeds) {
  const billing = feature.statements;
  return [
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
  ];
}
