// Tenant billing, built once on the energy and analysis features: the calculation reads the interval store and the dated tariffs.
import type { AuditLog } from '../platform/db/auditTrail.ts';
import type { Db } from '../platform/db/client.ts';
import type { Energy } from '../energy/module.ts';
import type { Analysis } from '../analysis/module.ts';
import { BillingCalculation } from './calculation.ts';
import { Billing } from './service.ts';

export function buildBilling(db: Db, audit: AuditLog, energy: Energy, analysis: Analysis): Billing {
  const calculation = new BillingCalculation(db, energy.store, energy.tariffs, energy.figures, analysis.demandCharges, energy.timezone);
  return new Billing(db, audit, calculation, () => energy.tariffs.load());
}
