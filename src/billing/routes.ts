// /api/billing: tenants and cost centres, meter splits, own tariffs, billing periods, runs and statements (PDF, XLSX,
// mailed on issue), supplier bills, budgets and measures; each sub-resource's route table in its own file, published
// in this order under one key. Viewers read; admins set up tenants, splits, rules and periods, run and issue.
import { budgetRoutes, type BudgetRouteNeeds } from './budgetRoutes.ts';
import { measureRoutes, type MeasureRouteNeeds } from './measureRoutes.ts';
import { ownTariffRoutes, type OwnTariffRouteNeeds } from './ownTariffRoutes.ts';
import { runRoutes, type RunRouteNeeds } from './runRoutes.ts';
import { statementRoutes, type StatementRouteNeeds } from './statementRoutes.ts';
import { supplierBillRoutes, type SupplierBillRouteNeeds } from './supplierBillRoutes.ts';
import { tenantRoutes, type TenantRouteNeeds } from './tenantRoutes.ts';

export type BillingRouteNeeds = TenantRouteNeeds &
  OwnTariffRouteNeeds &
  RunRouteNeeds &
  StatementRouteNeeds &
  SupplierBillRouteNeeds &
  BudgetRouteNeeds &
  MeasureRouteNeeds;

export function billingRoutes(needs: BillingRouteNeeds) {
  return [
    ...tenantRoutes(needs),
    ...ownTariffRoutes(needs),
    ...runRoutes(needs),
    ...statementRoutes(needs),
    ...supplierBillRoutes(needs),
    ...budgetRoutes(needs),
    ...measureRoutes(needs),
  ];
}
