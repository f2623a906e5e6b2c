// Tenant billing, built once on the energy and analysis features: the calculation reads the interval store and the
// dated tariffs; budgets read the energy figures; measures fit the analysis baselines (which need the gateway, so
// they are built with it, as the analysis routes build theirs).
import type { Energy } from '../energy/index.ts';
import type { Analysis } from '../analysis/index.ts';
import type { GatewayPort } from '../gateway/index.ts';
import type { AuditLog } from '../platform/db/auditTrail.ts';
import type { Db } from '../platform/db/client.ts';
import { BillingCalculation } from './calculation.ts';
import { Budgets } from './budgets.ts';
import { Measures } from './savings.ts';
import { Billing } from './service.ts';
import { SupplierBills } from './supplierBills.ts';

export type BillingFeature = { statements: Billing; supplierBills: SupplierBills; budgets: Budgets; measures: (iot: Pick<GatewayPort, 'history'>) => Measures };

export function buildBilling(db: Db, audit: AuditLog, energy: Energy, analysis: Analysis): BillingFeature {
  const calculation = new BillingCalculation(db, energy.store, energy.meters, energy.tariffs, energy.figures, analysis.demandCharges, energy.timezone);
  const statements = new Billing(db, audit, calculation, () => energy.tariffs.load());
  const supplierBills = new SupplierBills(
    db,
    audit,
    calculation,
    energy.tariffs,
    analysis.demandCharges,
    energy.calorific,
    () => statements.settings().supplierBillTolerancePercent,
  );
  const budgets = new Budgets(db, audit, energy.figures, calculation, statements);
  return {
    statements,
    supplierBills,
    budgets,
    measures: (iot) => {
      const baselines = analysis.baselines(iot);
      return new Measures(db, audit, energy.figures, () => baselines, energy.meters);
    },
  };
}
