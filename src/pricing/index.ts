// The face of pricing/: what the other contexts use of it. Imports from outside pricing/ come through this file
// (test/structure/importGraph.test.ts); what is not listed here is pricing's own business.
export { type CalorificFactors, CalorificValues, kwhPerM3ByDay } from './calorific.ts';
export { meterPrices, type MeterCommodity, type PricedMeter } from './meterPricing.ts';
export { Tariffs } from './tariffs.ts';
export { buildPricing, buildPricingModule, buildPricingRoutes, pricingRouteGroups, type Pricing } from './module.ts';
export type { CostRestatement, RestateCosts, TariffRouteNeeds } from './routes.ts';
