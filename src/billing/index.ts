// The face of billing/: what the other contexts use of it. Imports from outside billing/ come through this file
// (test/structure/importGraph.test.ts); what is not listed here is billing's own business.
export { billingRouteGroups, buildBilling, buildBillingModule, type BillingContext, type BillingFeature, type BillingNeeds } from './module.ts';
