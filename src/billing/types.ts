// Tenant billing's shapes: tenants, meter splits, rules, periods, runs and statements, as the services answer them.
import type { AllocationMethod, AllocationShare, Commodity } from '../platform/db/schema/index.ts';
import type { AuditTolerances } from './billAudit.ts';
import type { Bill, Quality, TenantBill } from './bill.ts';

export type Tenant = {
  id: number;
  name: string;
  kind: 'tenant' | 'cost_centre';
  contactEmail: string | null;
  floorAreaM2: number;
  createdAt: string;
  updatedAt: string;
};
export type TenantInput = { name: string; kind?: 'tenant' | 'cost_centre'; contactEmail?: string | null; floorAreaM2?: number };
export type Allocation = {
  meterId: number;
  meterName: string;
  method: AllocationMethod;
  shares: AllocationShare[];
  landlordValue: number;
  fractions: { tenantId: number; fraction: number }[];
  landlordFraction: number;
};
export type AllocationInput = { method: AllocationMethod; shares: AllocationShare[]; landlordValue?: number };
export type BillingSettings = {
  maxMissingPercent: number;
  maxEstimatedPercent: number;
  supplierBillTolerancePercent: number;
  /** The supplier-bill audit's tolerance per check; a check not set takes its default. */
  billAudit: AuditTolerances;
};
export type BillingSettingsInput = Omit<BillingSettings, 'billAudit'> & { billAudit?: Partial<AuditTolerances> };
export type Period = { id: number; name: string; from: string; to: string; createdAt: string };
export type RunSummary = {
  currency: string;
  site: Bill & { meters: { meterId: number; name: string; utility: Commodity }[] };
  landlord: Bill;
  quality: Quality;
  reconciliation: { siteTotalCents: number; statementsCents: number; landlordCents: number };
};
export type Run = {
  id: number;
  periodId: number;
  period: Period;
  status: 'draft' | 'issued';
  kind: 'initial' | 'restatement';
  correctsRunId: number | null;
  computedAt: string;
  issuedAt: string | null;
  issuedBy: string | null;
  summary: RunSummary;
  statements: { id: number; tenantId: number; tenantName: string; totalCents: number }[];
};
export type Difference = {
  correctsStatementId: number | null;
  totalCents: number;
  energy: { utility: Commodity; band: string; quantity: number; amountCents: number }[];
  /** The change in standing and in demand charges, so the lines add up to totalCents. */
  standingCents: number;
  demandCents: number;
};
export type Statement = {
  id: number;
  runId: number;
  status: 'draft' | 'issued';
  kind: 'initial' | 'restatement';
  tenant: { id: number; name: string; kind: 'tenant' | 'cost_centre'; contactEmail: string | null };
  period: Period;
  currency: string;
  totalCents: number;
  content: TenantBill;
  difference: Difference | null;
};
