import { Type } from '@sinclair/typebox';
import { defineRoute, Reply } from '../platform/http/route.ts';
import { ErrorBody, IdParams } from '../platform/http/schemas.ts';
import { Allocation, AllocationBody, MeterParams, Settings, SettingsBody, Tenant, TenantCreate, TenantUpdate } from './schemas.ts';
import type { Billing } from './service.ts';

const tags = ['billing'];

export type TenantRouteNeeds = { billing: { statements: Billing } };

export function tenantRoutes({ billing: feature }: TenantRouteNeeds) {
  const billing = feature.statements;
  return [
    defineRoute({
      method: 'GET',
      path: '/api/billing/tenants',
      access: 'viewer',
      summary: 'Tenants and cost centres billed for energy',
      description: 'Every tenant and cost centre, by name, with its contact and floor area. Changes nothing.',
      tags,
      schemas: { response: { 200: Type.Object({ items: Type.Array(Tenant) }) } },
      handler: () => ({ items: billing.tenants() }),
    }),
    defineRoute({
      method: 'POST',
      path: '/api/billing/tenants',
      access: 'admin',
      summary: 'Add a tenant or cost centre',
      description: 'Admin only; audited. Names are unique case-insensitively (409). floorAreaM2 is the key of meters split by floor area.',
      example: { name: 'Café Nord', kind: 'tenant', contactEmail: 'accounts@cafe-nord.example', floorAreaM2: 120 },
      tags,
      schemas: { body: TenantCreate, response: { 201: Tenant, 400: ErrorBody, 409: ErrorBody } },
      handler: ({ body, user }) => new Reply(201, billing.createTenant(body, user)),
    }),
    defineRoute({
      method: 'PATCH',
      path: '/api/billing/tenants/:id',
      access: 'admin',
      summary: 'Change a tenant or cost centre',
      description: 'Admin only; audited. Issued statements keep what they were issued with.',
      example: { floorAreaM2: 140 },
      tags,
      schemas: { params: IdParams, body: TenantUpdate, response: { 200: Tenant, 400: ErrorBody, 404: ErrorBody, 409: ErrorBody } },
      handler: ({ params, body, user }) => billing.updateTenant(params.id, body, user),
    }),
    defineRoute({
      method: 'GET',
      path: '/api/billing/allocations',
      access: 'viewer',
      summary: "Each billed meter's split between tenants, with the fractions it gives and the landlord's rest",
      description:
        'Each split meter: its method, the shares as entered, and the fraction of its energy each tenant and the landlord takes now. Changes nothing.',
      tags,
      schemas: { response: { 200: Type.Object({ items: Type.Array(Allocation) }) } },
      handler: () => ({ items: billing.allocations() }),
    }),
    defineRoute({
      method: 'PUT',
      path: '/api/billing/allocations/:meterId',
      access: 'admin',
      summary: "Set how a meter's energy is split: by percentage, by floor area (common areas) or by a fixed key",
      description:
        "Admin only; audited. percent: the tenants' values and landlordValue must add up to 100 (else 400 with the sum). floor_area: each tenant's share is its floorAreaM2 ÷ " +
        "(the listed tenants' floor areas + landlordValue, the vacant m²), taken when a run is computed. fixed_key: value ÷ (Σ values + landlordValue). " +
        "Only consumption is split: an export or generation meter is 400. What no tenant takes is the landlord's. " +
        'A meter whose energy another split meter already holds (a sub-meter beneath a split supply meter, the supply above a split sub-meter, ' +
        'virtual meters sharing a term) is 409 naming both meters: the same energy is never billed twice (docs/billing.md, "The meter tree").',
      example: {
        method: 'percent',
        shares: [
          { tenantId: 1, value: 60 },
          { tenantId: 2, value: 30 },
        ],
        landlordValue: 10,
      },
      tags,
      schemas: { params: MeterParams, body: AllocationBody, response: { 200: Allocation, 400: ErrorBody, 404: ErrorBody, 409: ErrorBody } },
      handler: ({ params, body, user }) => billing.putAllocation(params.meterId, body, user),
    }),
    defineRoute({
      method: 'DELETE',
      path: '/api/billing/allocations/:meterId',
      access: 'admin',
      summary: 'Stop splitting a meter between tenants',
      description: 'Admin only; audited. Later runs no longer bill the meter to anyone; issued statements keep it.',
      tags,
      schemas: { params: MeterParams, response: { 204: Type.Null(), 404: ErrorBody } },
      handler: ({ params, user }) => {
        billing.deleteAllocation(params.meterId, user);
        return new Reply(204, null);
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/api/billing/settings',
      access: 'viewer',
      summary: "The site's billing rules: how much missing or estimated data a run may have and still be issued",
      description:
        "maxMissingPercent and maxEstimatedPercent bound the share of a run's metered intervals that may lack data or be estimated for it to be issued; supplierBillTolerancePercent flags supplier bill lines; " +
        "billAudit holds the supplier-bill audit's tolerance of each check. Changes nothing.",
      tags,
      schemas: { response: { 200: Settings } },
      handler: () => billing.settings(),
    }),
    defineRoute({
      method: 'PUT',
      path: '/api/billing/settings',
      access: 'admin',
      summary: "Replace the site's billing rules",
      description: 'Admin only; audited. billAudit may name some checks only: the others keep their tolerance.',
      example: { maxMissingPercent: 0.5, maxEstimatedPercent: 5, supplierBillTolerancePercent: 2, billAudit: { ratePercent: 0.1, yearOnYearPercent: 25 } },
      tags,
      schemas: { body: SettingsBody, response: { 200: Settings, 400: ErrorBody } },
      handler: ({ body, user }) => billing.putSettings(body, user),
    }),
  ];
}
