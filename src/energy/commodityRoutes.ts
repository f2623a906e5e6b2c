// /api/energy/calorific-values and /api/energy/commodities: gas conversion versions and the figures of every utility.
import { Type } from '@sinclair/typebox';
import type { AppDeps } from '../appDeps.ts';
import { defineRoute, Reply } from '../http/route.ts';
import { ErrorBody, IdParams, Page, PageQuery } from '../http/schemas.ts';
import { CalorificCreate, CalorificUpdate, CalorificVersion } from './commoditySchemas.ts';

const tags = ['energy'];
const ListQuery = Type.Object({ ...PageQuery }, { additionalProperties: false });

export function commodityRoutes({ energy }: AppDeps) {
  const { calorific } = energy;
  return [
    defineRoute({
      method: 'GET',
      path: '/api/energy/calorific-values',
      access: 'viewer',
      summary: 'Gas calorific value versions, oldest first',
      description: 'A page of versions: each converts gas m³ to kWh (m³ × kwhPerM3 × correctionFactor) from its validFrom until the next. Changes nothing.',
      tags,
      schemas: { query: ListQuery, response: { 200: Page(CalorificVersion) } },
      handler: ({ query }) => calorific.page(query.page, query.pageSize),
    }),
    defineRoute({
      method: 'POST',
      path: '/api/energy/calorific-values',
      access: 'admin',
      summary: 'Add a calorific value version from a future day',
      example: { validFrom: '2099-01-01', kwhPerM3: 11.1, correctionFactor: 1.02264, note: 'Supplier bill of December' },
      description: 'validFrom must be after today, so gas energy once reported never changes. Audited.',
      tags,
      schemas: { body: CalorificCreate, response: { 201: CalorificVersion, 400: ErrorBody, 409: ErrorBody } },
      handler: ({ body, user }) => new Reply(201, calorific.create(body, user)),
    }),
    defineRoute({
      method: 'GET',
      path: '/api/energy/calorific-values/:id',
      access: 'viewer',
      summary: 'Read one calorific value version',
      description: 'One version. Changes nothing.',
      tags,
      schemas: { params: IdParams, response: { 200: CalorificVersion, 404: ErrorBody } },
      handler: ({ params }) => calorific.get(params.id),
    }),
    defineRoute({
      method: 'PUT',
      path: '/api/energy/calorific-values/:id',
      access: 'admin',
      summary: 'Change a version that is not yet in effect (partial)',
      description: 'Changes the fields sent of a version whose validFrom is still in the future (409 once it is in effect). Audited.',
      example: { kwhPerM3: 11.2 },
      tags,
      schemas: { params: IdParams, body: CalorificUpdate, response: { 200: CalorificVersion, 400: ErrorBody, 404: ErrorBody, 409: ErrorBody } },
      handler: ({ params, body, user }) => calorific.update(params.id, body, user),
    }),
    defineRoute({
      method: 'DELETE',
      path: '/api/energy/calorific-values/:id',
      access: 'admin',
      summary: 'Remove a version that is not yet in effect',
      description: 'Removes a version whose validFrom is still in the future (409 once it is in effect). Audited.',
      tags,
      schemas: { params: IdParams, response: { 204: Type.Null(), 404: ErrorBody, 409: ErrorBody } },
      handler: ({ params, user }) => {
        calorific.delete(params.id, user);
        return new Reply(204, null);
      },
    }),
  ];
}
