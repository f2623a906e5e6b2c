// Tenant billing, built once on the energy and analysis features: the calculation reads the interval store and the
// dated tariffs; budgets read the energy figures; measures fit the analysis baselines.
import type { EnergyFigures } from '../energy/index.ts';
import type { IntervalStore, MeterDirectory } from '../metering/index.ts';
import type { CalorificValues, Tariffs } from '../pricing/index.ts';
import type { Analysis } from '../analysis/index.ts';
import type { AuditLog } from '../platform/db/auditTrail.ts';
import type { Db } from '../platform/db/client.ts';
import { BillingCalculation } from './calculation.ts';
import { Budgets } from './budgets.ts';
import { Measures } from './savings.ts';
import { Billing } from './service.ts';
import { SupplierBills } from './supplierBills.ts';
import { OwnTariffs } from './ownTariffs.ts';
import type { AlertService } from '../facility/index.ts';
import { Repeating } from '../platform/jobs/lifecycle.ts';
import type { RouteGroups } from '../platform/http/route.ts';
import type { Module } from '../platform/jobs/module.ts';
import type { Logger } from '../platform/logger.ts';
import type { Mailer } from '../platform/mail/mailer.ts';
import { billingRoutes, type BillingRouteNeeds } from './routes.ts';
import { StatementMail } from './statementMail.ts';

/** What billing reads of the data path: metering's store and meters, pricing's tariffs and calorific values, energy's figures. */
export type BillingReads = {
  figures: EnergyFigures;
  store: IntervalStore;
  meters: MeterDirectory;
  tariffs: Tariffs;
  calorific: CalorificValues;
  timezone: () => string;
};

export type BillingFeature = { statements: Billing; supplierBills: SupplierBills; budgets: Budgets; measures: Measures; tariffs: OwnTariffs };

export function buildBilling(db: Db, audit: AuditLog, energy: BillingReads, analysis: Analysis): BillingFeature {
  const tariffs: OwnTariffs = new OwnTariffs(db, audit, {
    tenant: (id) => statements.tenants().some((tenant) => tenant.id === id),
    meter: (id) => energy.meters.summary(id),
  });
  const calculation = new BillingCalculation(
    db,
    energy.store,
    energy.meters,
    energy.tariffs,
    energy.figures,
    analysis.demandCharges,
    energy.timezone,
    () => tariffs.snapshot(),
    (days) => energy.calorific.kwhPerM3(days),
  );
  const statements = new Billing(db, audit, calculation, () => energy.tariffs.load());
  const supplierBills = new SupplierBills(db, audit, calculation, energy.tariffs, analysis.demandCharges, energy.calorific, () => {
    const settings = statements.settings();
    return { tolerancePercent: settings.supplierBillTolerancePercent, audit: settings.billAudit };
  });
  const budgets = new Budgets(db, audit, energy.figures, calculation, statements, analysis.baselines);
  return {
    statements,
    supplierBills,
    budgets,
    measures: new Measures(db, audit, energy.figures, analysis.baselines, energy.meters),
    tariffs,
  };
}

export type BillingNeeds = BillingReads & {
  db: Db;
  audit: AuditLog;
  analysis: Analysis;
  alerts: Pick<AlertService, 'fromGatewayAlarm'>;
  logger: Logger;
  /** Statements are mailed from a billing run. */
  mailer: Mailer;
  /** The budget check runs while the collector does (EMS_COLLECT_INTERVAL > 0). */
  collecting: boolean;
};

/** The billing context's route table. */
export function billingRouteGroups(needs: BillingRouteNeeds): RouteGroups {
  return { billing: billingRoutes(needs) };
}

/** The billing context as the composition root builds it; its job: budgets whose year-end forecast passes them (issue 42), hourly, an alert once per budget and year. */
/** The billing context's services as the service holds them: the pieces above and the mailing of issued statements. */
export type BillingContext = BillingFeature & { mail: StatementMail };

export function buildBillingModule(needs: BillingNeeds): Module<{ billing: BillingContext }> {
  const { db, audit, analysis, alerts, logger, mailer, collecting } = needs;
  const built = buildBilling(db, audit, needs, analysis);
  const billing = { ...built, mail: new StatementMail(built.statements, mailer, logger) };
  const budgetRuns = new Repeating(
    async () => {
      try {
        await billing.budgets.check((alarm) => alerts.fromGatewayAlarm(alarm));
      } catch (error) {
        logger.error({ err: error }, 'budget check failed');
      }
    },
    3_600_000,
    'budget check',
  );
  return {
    context: 'billing',
    services: { billing },
    routes: billingRouteGroups({ billing, alerts }),
    running: [
      { name: 'budget check', start: collecting ? () => budgetRuns.start() : undefined, jobs: collecting ? [budgetRuns] : [], stop: () => budgetRuns.stop() },
    ],
  };
}
