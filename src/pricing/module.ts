// The pricing context, built once by the composition root: the dated tariff versions and the gas calorific values,
// each read against the site's day (the site settings' time zone, a port the root hands in: pricing sits below site).
// Its route table (tariffs) is a module of its own, built once metering's restatement exists (a back-dated version
// restates the stored days, which are metering's).
import type { AuditLog } from '../platform/db/auditTrail.ts';
import type { Db } from '../platform/db/client.ts';
import type { RouteGroups } from '../platform/http/route.ts';
import type { Module } from '../platform/jobs/module.ts';
import { siteDay } from '../platform/time/calendar.ts';
import { CalorificValues } from './calorific.ts';
import { tariffRoutes, type TariffRouteNeeds } from './routes.ts';
import { Tariffs } from './tariffs.ts';

/** What the pricing module builds, once each. */
export type Pricing = { tariffs: Tariffs; calorific: CalorificValues };

/** The tariffs and calorific values over one connection (the service's, or the report worker's read-only one). */
export function buildPricing({ db, audit, timezone }: { db: Db; audit: AuditLog; timezone: () => string }): Pricing {
  const today = () => siteDay(timezone());
  return { tariffs: new Tariffs(db, audit, today), calorific: new CalorificValues(db, audit, today) };
}

/** The pricing context as the composition root builds it: its pieces, no jobs; its routes come with buildPricingRoutes. */
export function buildPricingModule(needs: { db: Db; audit: AuditLog; timezone: () => string }): Module<Pricing> {
  return { context: 'pricing', services: buildPricing(needs) };
}

/** Pricing's route table: the tariff versions. */
export function pricingRouteGroups(needs: TariffRouteNeeds): RouteGroups {
  return { tariffs: tariffRoutes(needs) };
}

/** Pricing's routes, once the stored days can be restated (metering's restatement, the port RestateCosts). */
export function buildPricingRoutes(needs: TariffRouteNeeds): Module<Record<string, never>> {
  return { context: 'pricing', services: {}, routes: pricingRouteGroups(needs) };
}
