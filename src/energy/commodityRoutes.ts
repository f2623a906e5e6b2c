// /api/energy/calorific-values and /api/energy/commodities: gas conversion versions and the figures of every utility.
import type { CalorificValues } from '../pricing/index.ts';
import type { CommodityFigures as CommodityReader } from './commodities.ts';
import { Type } from '@sinclair/typebox';
import { defineRoute, Reply } from '../platform/http/route.ts';
import { ErrorBody, IdParams, Page, PageQuery } from '../platform/http/schemas.ts';
import { BadRequest } from '../platform/errors.ts';
import { addDays } from '../platform/time/calendar.ts';
import { CalorificCreate, CalorificUpdate, CalorificVersion, CommodityFigures } from './commoditySchemas.ts';
import type { RestateCosts } from '../pricing/index.ts';
import { ENERGY_YEARS } from './routes.ts';
import { PeriodQuery } from './schemas.ts';

const tags = ['energy'];
const ListQuery = Type.Object({ ...PageQuery }, { additionalProperties: false });

/** A year of days per call: the figures read each meter's day rows. */
const MAX_DAYS = 366 * 2;

function checkPeriod(from: string, to: string): void {
  for (const [value, path] of [
    [from, 'query.from'],
    [to, 'query.to'],
  ]) {
    const year = Number(value.slice(0, 4));
    if (!(year >= ENERGY_YEARS.min && year <= ENERGY_YEARS.max))
      throw new BadRequest('Invalid query', [{ path, message: `must be in the years ${ENERGY_YEARS.min} to ${ENERGY_YEARS.max}` }]);
  }
  if (to <= from) throw new BadRequest('Invalid query', [{ path: 'query.to', message: 'must be after from' }]);
  if (to > addDays(from, MAX_DAYS)) throw new BadRequest('Invalid query', [{ path: 'query.to', message: `at most ${MAX_DAYS} days after from` }]);
}

export type CommodityRouteNeeds = { energy: { calorific: CalorificValues; commodities: CommodityReader; restate: RestateCosts } };

export function commodityRoutes({ energy }: CommodityRouteNeeds) {
  const { calorific, commodities } = energy;
  return [
    defineRoute({
      method: 'GET',
      path: '/api/energy/commodities',
      access: 'viewer',
      summary: 'Every utility over a period: electricity balance with PV, gas (m³ and kWh), water (m³), heat',
      description:
        'Per commodity its quantity in its own unit, energy, cost and CO2; the electricity balance (import, export, generation, consumption, self-consumption, self-sufficiency, net import); gas per day with the calorific value in force. m³ is never added to kWh. Changes nothing.',
      tags,
      schemas: { query: PeriodQuery, response: { 200: CommodityFigures, 400: ErrorBody } },
      handler: ({ query }) => {
        checkPeriod(query.from, query.to);
        return commodities.period(query.from, query.to);
      },
    }),
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
      summary: 'Add a calorific value version (from a future day, or back-dated from a bill)',
      example: { validFrom: '2099-01-01', kwhPerM3: 11.1, correctionFactor: 1.02264, note: 'Supplier bill of December' },
      description:
        'A validFrom of today or earlier restates the gas days it decides (up to the next version or today): their kWh and stored cost follow the new value; audited (restate_costs).',
      tags,
      schemas: { body: CalorificCreate, response: { 201: CalorificVersion, 400: ErrorBody, 409: ErrorBody } },
      handler: async ({ body, user }) => {
        const version = calorific.create(body, user);
        // Back-dated: gas days it decides are priced again (their kWh are converted at read time already).
        const days = calorific.restatedDays(version);
        if (days) await energy.restate({ ...days, commodity: 'gas', reason: { resource: 'calorific_versions', resourceId: version.id } }, user);
        return new Reply(201, version);
      },
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
