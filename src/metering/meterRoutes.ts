// /api/meters: the meters read from the gateway and the virtual meters built on them (published under energy).
import { Type } from '@sinclair/typebox';
import type { IotGateway } from '../gateway/index.ts';
import { defineRoute, Reply } from '../platform/http/route.ts';
import { ErrorBody, IdParams, Page, PageQuery } from '../platform/http/schemas.ts';
import type { MeterDirectory } from './meters.ts';
import { Meter, MeterCreate, MeterProposals, MeterUpdate } from './schemas.ts';

const tags = ['energy'];
const ListQuery = Type.Object({ ...PageQuery }, { additionalProperties: false });

export type MeterRouteNeeds = { meters: MeterDirectory; iot: IotGateway };

export function meterRoutes({ meters, iot }: MeterRouteNeeds) {
  return [
    defineRoute({
      method: 'GET',
      path: '/api/meters',
      access: 'viewer',
      summary: 'Meters read from the gateway (and virtual meters built on them)',
      description: 'A page of meters: gateway energy and power meters and virtual meters (sums and differences of others). Changes nothing.',
      tags,
      schemas: { query: ListQuery, response: { 200: Page(Meter) } },
      handler: ({ query }) => meters.page(query.page, query.pageSize),
    }),
    defineRoute({
      method: 'POST',
      path: '/api/meters',
      access: 'admin',
      summary: 'Add a meter',
      example: { name: 'Main incomer', code: 'meter.main.kwh', kind: 'energy', site: true },
      description: 'A meter read for the first time is backfilled from the gateway history (7 days) by the next collection.',
      tags,
      schemas: { body: MeterCreate, response: { 201: Meter, 400: ErrorBody, 409: ErrorBody } },
      handler: ({ body, user }) => new Reply(201, meters.create(body, user)),
    }),
    defineRoute({
      method: 'GET',
      path: '/api/meters/discover',
      access: 'admin',
      summary: "Meters proposed from the gateway's point catalogue (energy counters and power points)",
      description:
        "Reads the gateway's point catalogue and proposes a meter for each energy counter and power point not yet a meter; nothing is created. 502 when the gateway fails.",
      tags,
      schemas: { response: { 200: MeterProposals, 502: ErrorBody } },
      handler: () => meters.discover(iot),
    }),
    defineRoute({
      method: 'GET',
      path: '/api/meters/:id',
      access: 'viewer',
      summary: 'Read one meter',
      description: 'One meter. Changes nothing.',
      tags,
      schemas: { params: IdParams, response: { 200: Meter, 404: ErrorBody } },
      handler: ({ params }) => meters.get(params.id),
    }),
    defineRoute({
      method: 'PUT',
      path: '/api/meters/:id',
      access: 'admin',
      summary: 'Change a meter (partial; its kind never changes)',
      description: 'Changes the fields sent; the stored intervals stay. 409 when another meter has the name or reads the point already. Audited.',
      example: { enabled: false },
      tags,
      schemas: { params: IdParams, body: MeterUpdate, response: { 200: Meter, 400: ErrorBody, 404: ErrorBody, 409: ErrorBody } },
      handler: ({ params, body, user }) => meters.update(params.id, body, user),
    }),
    defineRoute({
      method: 'DELETE',
      path: '/api/meters/:id',
      access: 'admin',
      summary: 'Remove a meter and its stored intervals',
      description: '409 while a virtual meter is built on it.',
      tags,
      schemas: { params: IdParams, response: { 204: Type.Null(), 404: ErrorBody, 409: ErrorBody } },
      handler: ({ params, user }) => {
        meters.delete(params.id, user);
        return new Reply(204, null);
      },
    }),
  ];
}
