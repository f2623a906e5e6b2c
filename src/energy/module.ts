// The energy feature's pieces, built once by the composition root: meters, tariffs, the interval store, its figures,
// the hand-entered area cards and the site's energy over both (SiteEnergy).
import {
  type Restatement,
  restateCosts,
  HistoryImport,
  ImportJobs,
  commodityOf,
  MeterDirectory,
  type Meter,
  IntervalStore,
  StoredDays,
  SuspectRuns,
} from '../metering/index.ts';
import { siteTimezone } from '../site/index.ts';
import { CalorificValues, Tariffs } from '../pricing/index.ts';
import { everAudited, type Actor, type AuditLog } from '../platform/db/auditTrail.ts';
import type { Db } from '../platform/db/client.ts';
import type { Logger } from '../platform/logger.ts';
import { siteDay } from '../platform/time/calendar.ts';
import { CommodityFigures } from './commodities.ts';
import { EnergyFigures } from './figures.ts';
import { AreaCards } from './areaCards.ts';
import { SiteEnergy } from './siteEnergy.ts';
import { DemandWatch, type PeakWarningLog } from './demandWatch.ts';
import type { AlertService } from '../facility/index.ts';
import type { IotGateway } from '../gateway/index.ts';
import { commodityRoutes, type CommodityRouteNeeds } from './commodityRoutes.ts';
import { energyRoutes, type EnergyRouteNeeds } from './routes.ts';
import type { RouteGroups } from '../platform/http/route.ts';
import type { Module } from '../platform/jobs/module.ts';

export type Energy = {
  meters: MeterDirectory;
  tariffs: Tariffs;
  store: IntervalStore;
  /** Metering's reader of the stored day and month rows: the one every figure, export and analysis reads them through. */
  days: StoredDays;
  /** The meters' figures (the interval store): what a meter, an area's meters or the site meters measured. */
  figures: EnergyFigures;
  /** The hand-entered area cards (PUT /api/energy/areas), metered areas listed with their meters' figures; their read whole (view). */
  areas: AreaCards;
  /** The site's energy from meters where they exist and from the cards where not: what the overview, reports and anomalies ask. */
  site: SiteEnergy;
  timezone: () => string;
  calorific: CalorificValues;
  commodities: CommodityFigures;
  history: HistoryImport;
  /** The history import as background jobs (progress, cancel): the staff app's import screen (issue 52). */
  importJobs: ImportJobs;
  /** Suspect runs (a flat zero on a meter that reads more): found by the import and the collector's watch, confirmed by a person. */
  suspects: SuspectRuns;
  /** Re-prices the stored days a back-dated tariff or calorific version covers, audited (issue 41). */
  restate: (scope: Parameters<typeof restateCosts>[1], actor: Actor | null) => Promise<Restatement>;
  /** The site settings' price made the electricity tariff from today while the site has none of its own, today's costs restated (issue 52). */
  setupPrice: (price: number, actor: Actor | null) => Promise<void>;
};

export function buildEnergy(db: Db, audit: AuditLog): Energy {
  const timezone = siteTimezone(db);
  const tariffs = new Tariffs(db, audit, () => siteDay(timezone()));
  const store = new IntervalStore(db, tariffs, timezone);
  // The one construction site of the stored-day reader (test/structure/composition.test.ts); the report worker gets
  // its own through this function, on its own read-only connection.
  const days = new StoredDays(db, timezone, () => store.heldDays());
  const figures = new EnergyFigures(db, tariffs, days, store);
  const meters = new MeterDirectory(db, audit, (meter) => store.rebuilds.schedule(meter));
  const calorific = new CalorificValues(db, audit, () => siteDay(timezone()));
  const commodities = new CommodityFigures(db, figures, tariffs, calorific, meters, days);
  const suspects = new SuspectRuns(db, store, timezone, audit);
  const history = new HistoryImport({ store, meters, audit, timezone, suspects });
  const importJobs = new ImportJobs(history);
  const site = new SiteEnergy(db, figures, (from, to) => commodities.period(from, to).electricity.consumptionKwh);
  const areas = new AreaCards(db, audit, meters, site);
  const restate = (scope: Parameters<typeof restateCosts>[1], actor: Actor | null) => restateCosts({ db, store, audit }, scope, actor);
  const setupPrice = async (price: number, actor: Actor | null) => {
    const version = tariffs.setupPrice(price, actor ?? { id: null, username: 'system' });
    const span = version && tariffs.restatedDays(version);
    if (version && span) await restate({ ...span, commodity: 'electricity', reason: { resource: 'tariff_versions', resourceId: version.id } }, actor);
  };
  return { meters, tariffs, store, days, figures, areas, site, timezone, calorific, commodities, history, importJobs, suspects, restate, setupPrice };
}

export type EnergyContextRouteNeeds = EnergyRouteNeeds & CommodityRouteNeeds;

/** The energy context's route tables: meters, tariffs, area cards and figures; the other utilities. */
export function energyRouteGroups(needs: EnergyContextRouteNeeds): RouteGroups {
  return { energy: energyRoutes(needs), commodities: commodityRoutes(needs) };
}

/** The energy context as the composition root builds it: its pieces (above), no jobs of its own; its routes. */
export function buildEnergyModule({ db, audit, iot }: { db: Db; audit: AuditLog; iot: IotGateway }): Module<{ energy: Energy }> {
  const energy = buildEnergy(db, audit);
  return { context: 'energy', services: { energy }, routes: energyRouteGroups({ energy, iot }) };
}

/**
 * The peak-demand watch (the collector asks it after each collection): built once the alert intake runs, just before
 * the collector, since it reads the open episode's key as it is built.
 */
export function buildDemandWatch({
  db,
  energy,
  warnings,
  alerts,
  logger,
}: {
  db: Db;
  energy: Energy;
  /** Where the warnings are recorded: analysis's PeakWarnings, the owner of peak_warnings (built after energy). */
  warnings: PeakWarningLog;
  alerts: Pick<AlertService, 'fromGatewayAlarm' | 'openAlarmKeyOf'>;
  logger: Logger;
}): Module<{ demand: DemandWatch }> {
  return {
    context: 'energy',
    services: { demand: new DemandWatch({ db, warnings, figures: energy.figures, tariffs: energy.tariffs, alerts, logger, timezone: energy.timezone }) },
  };
}

/**
 * With the built-in simulator, the first start meters its building: the main incomer (the site's grid import), each
 * sub-meter in its area, the PV array and the grid export, gas and water, and "Rest of building" = the building's
 * consumption (import + generation − export) − sub-meters. Done once: after any meter change it is never redone.
 */
export function ensureSimulatorMeters(
  db: Db,
  meters: MeterDirectory,
  catalogue: { code: string; name: string; kind: string; unit?: string }[],
  logger: Logger,
): number {
  const touched = everAudited(db, 'meters');
  if (touched || meters.all().length) return 0;
  const areaOf = (code: string) =>
    code.startsWith('meter.hvac') ? 'HVAC' : code.startsWith('meter.lighting') ? 'Lighting' : code.startsWith('meter.it') ? 'Server room' : 'Tenants';
  const counters = catalogue.filter((point) => point.kind === 'energy');
  const main = counters.find((point) => point.code === 'meter.main.kwh');
  if (!main) return 0;
  // Utility counters (issue 26) by what the catalogue says they measure; the rest are electricity sub-meters.
  const utility = (point: { code: string; name: string; kind: string; unit?: string }) => {
    const what = commodityOf(point.kind, point.unit ?? 'kWh', `${point.code.replace(/[._-]/g, ' ')} ${point.name}`);
    return what && (what.commodity !== 'electricity' || what.role !== 'import') ? what : null;
  };
  const created: Meter[] = [];
  db.sqlite.transaction(() => {
    const site = meters.create({ name: 'Main incomer', code: main.code, kind: 'energy', site: true }, null);
    const subs = counters
      .filter((point) => point !== main && !utility(point))
      .map((point) => meters.create({ name: point.name.replace(/ energy$/, ''), code: point.code, kind: 'energy', area: areaOf(point.code) }, null));
    const others = counters
      .filter((point) => utility(point))
      .map((point) => meters.create({ name: point.name.replace(/ (energy|volume)$/, ''), code: point.code, kind: 'energy', ...utility(point)! }, null));
    // The building's consumption is what it draws plus what its panels make less what it feeds back.
    const flows = others
      .filter((meter) => meter.commodity === 'electricity')
      .map((meter) => ({ meterId: meter.id, sign: meter.role === 'generation' ? (1 as const) : (-1 as const) }));
    const rest = meters.create(
      {
        name: 'Rest of building',
        kind: 'virtual',
        area: 'Other',
        terms: [{ meterId: site.id, sign: 1 }, ...flows, ...subs.map((sub) => ({ meterId: sub.id, sign: -1 as const }))],
      },
      null,
    );
    created.push(site, ...subs, ...others, rest);
  })();
  logger.info({ meters: created.length }, 'metered the simulated building: main incomer, sub-meters and rest of building');
  return created.length;
}
