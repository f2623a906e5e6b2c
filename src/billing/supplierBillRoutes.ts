import { Type } from '@sinclair/typebox';
import { defineRoute, Reply } from '../platform/http/route.ts';
import { ErrorBody, IdParams } from '../platform/http/schemas.ts';
import { PayloadTooLarge, UnsupportedMediaType } from '../platform/errors.ts';
import type { IncomingMessage } from 'node:http';
import { BillCheck, SupplierBill, SupplierBillBody } from './schemas.ts';
import type { SupplierBills } from './supplierBills.ts';

const tags = ['billing'];

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

export type SupplierBillRouteNeeds = { billing: { supplierBills: SupplierBills } };

export function supplierBillRoutes({ billing: feature }: SupplierBillRouteNeeds) {
  const { supplierBills } = feature;
  return [
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
  ];
}
