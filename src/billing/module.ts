// Tenant billing, built once on the energy and analysis features: the calculation reads the interval store and the dated tariffs.
import type { AuditLog } from '../platform/db/auditTrail.ts';
import type { Db } from '../platform/db/client.ts';
import type { Energy } from '../energy/module.ts';
import type { Analysis } from '../analysis/module.ts';
import { BillingCalculation } from './calculation.ts';
import { Billing } from './service.ts';
import { SupplierBills } from './supplierBills.ts';

export type BillingFeature = { statements: Billing; supplierBills: SupplierBills };

export function buildBilling(db: Db, audit: AuditLog, energy: Energy, analysis: Analysis): BillingFeature {
  const calculation = new BillingCalculation(db, energy.store, energy.tariffs, energy.figures, analysis.demandCharges, energy.timezone);
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
  return { statements, supplierBills };
}
