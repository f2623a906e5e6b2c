// /api/energy/tariffs: the dated tariff versions (published under energy, where the staff app shows them).
import { Type } from '@sinclair/typebox';
import type { Actor } from '../platform/db/auditTrail.ts';
import type { Commodity } from '../platform/db/schema/index.ts';
import { defineRoute, Reply } from '../platform/http/route.ts';
import { ErrorBody, IdParams, Page, PageQuery } from '../platform/http/schemas.ts';
import { TariffCreate, TariffUpdate, TariffVersion } from './schemas.ts';
import type { Tariffs } from './tariffs.ts';

const tags = ['energy'];
const ListQuery = Type.Object({ ...PageQuery }, { additionalProperties: false });

/** The stored days a back-dated version decides, of one commodity, and the version that made them change. */
export type CostRestatement = { from: string; to: string; commodity: Commodity; reason: { resource: string; resourceId: number } };
/**
 * The port to the stored days (metering's restateCosts, handed in by the composition root): re-prices the days a
 * back-dated tariff or calorific version covers, audited. Pricing sits below metering, so it names only this shape.
 */
export type RestateCosts = (scope: CostRestatement, actor: Actor | null) => Promise<unknown>;

export type TariffRouteNeeds = { tariffs: Tariffs; restate: RestateCosts };

export function tariffRoutes({ tariffs, restate }: TariffRouteNeeds) {
  return [
    defineRoute({
      method: 'GET',
      path: '/api/energy/tariffs',
      access: 'viewer',
      summary: 'Tariff versions, oldest first',
      description: 'A page of tariff versions: each applies from its validFrom until the next. Changes nothing.',
      tags,
      schemas: { query: ListQuery, response: { 200: Page(TariffVersion) } },
      handler: ({ query }) => tariffs.page(query.page, query.pageSize),
    }),
    defineRoute({
      method: 'POST',
      path: '/api/energy/tariffs',
      access: 'admin',
      summary: 'Add a tariff version (from a future day, or back-dated from a bill)',
      example: {
        validFrom: '2099-01-01',
        price: 0.28,
        bands: [{ name: 'peak', days: ['mon', 'tue', 'wed', 'thu', 'fri'], from: '08:00', to: '20:00', price: 0.34 }],
        holidays: ['2099-12-25'],
        standingChargePerDay: 0.45,
        carbonFactor: 0.38,
      },
      description:
        'A version applies from validFrom until the next version. A validFrom of today or earlier (a bill entered later) restates the stored cost of every ' +
        'day it decides, up to the next version or today: each day of the meters of its commodity is priced again, and an audit entry (restate_costs) ' +
        'records the cost before and after. A version in effect is never changed or removed (409): add a version instead.',
      tags,
      schemas: { body: TariffCreate, response: { 201: TariffVersion, 400: ErrorBody, 409: ErrorBody } },
      handler: async ({ body, user }) => {
        const version = tariffs.create(body, user);
        // Back-dated (from a bill): the stored costs of the days it decides are restated now, audited.
        const days = tariffs.restatedDays(version);
        if (days) await restate({ ...days, commodity: version.commodity, reason: { resource: 'tariff_versions', resourceId: version.id } }, user);
        return new Reply(201, version);
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/api/energy/tariffs/:id',
      access: 'viewer',
      summary: 'Read one tariff version',
      description: 'One tariff version. Changes nothing.',
      tags,
      schemas: { params: IdParams, response: { 200: TariffVersion, 404: ErrorBody } },
      handler: ({ params }) => tariffs.get(params.id),
    }),
    defineRoute({
      method: 'PUT',
      path: '/api/energy/tariffs/:id',
      access: 'admin',
      summary: 'Change a version that is not yet in effect (partial)',
      description:
        'Changes the fields sent of a version whose validFrom is still in the future (409 once it is in effect, so no computed cost changes). Audited.',
      example: { price: 0.3, note: 'Supplier letter of 2026-11-02' },
      tags,
      schemas: { params: IdParams, body: TariffUpdate, response: { 200: TariffVersion, 400: ErrorBody, 404: ErrorBody, 409: ErrorBody } },
      handler: ({ params, body, user }) => tariffs.update(params.id, body, user),
    }),
    defineRoute({
      method: 'DELETE',
      path: '/api/energy/tariffs/:id',
      access: 'admin',
      summary: 'Remove a version that is not yet in effect',
      description: 'Removes a version whose validFrom is still in the future (409 once it is in effect). Audited.',
      tags,
      schemas: { params: IdParams, response: { 204: Type.Null(), 404: ErrorBody, 409: ErrorBody } },
      handler: ({ params, user }) => {
        tariffs.delete(params.id, user);
        return new Reply(204, null);
      },
    }),
  ];
}
