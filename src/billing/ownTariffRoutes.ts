import { Type } from '@sinclair/typebox';
import { defineRoute, Reply } from '../platform/http/route.ts';
import { ErrorBody, IdParams } from '../platform/http/schemas.ts';
import { OwnTariff, OwnTariffBody } from './schemas.ts';
import type { OwnTariffs } from './ownTariffs.ts';

const tags = ['billing'];

export type OwnTariffRouteNeeds = { billing: { tariffs: OwnTariffs } };

export function ownTariffRoutes({ billing: feature }: OwnTariffRouteNeeds) {
  return [
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
  ];
}
