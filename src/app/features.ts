// Builds the feature services once, from the core pieces; the route tables and emsctl are handed them from here.
import { AlertService, AlarmAreas, NotificationRules, FaultService, MaintenanceService } from '../facility/index.ts';
import {
  type LoginThrottle,
  unlockUser,
  assertPasswordLength,
  hashPassword,
  verifyPassword,
  UserDirectory,
  AuditReader,
  type AuthService,
  OAuthService,
} from '../access/index.ts';
import { buildEnergy, type Energy } from '../energy/index.ts';
import { buildAnalysis, type Analysis } from '../analysis/index.ts';
import { buildBilling, type BillingFeature } from '../billing/index.ts';
import { ReportService, EnergyExport } from '../reporting/index.ts';
import { ConfigStore } from '../site/index.ts';
import { TimeZoneMove, type Collector } from '../metering/index.ts';
import { OverviewService, DashboardService, WallboardService } from '../screens/index.ts';
import { createFileStore, createModelStore, type StoredFiles, AvatarStore } from '../files/index.ts';
import { publicGatewayState } from '../operations/index.ts';
import type { IotGateway } from '../gateway/index.ts';
import type { AuditLog } from '../platform/db/auditTrail.ts';
import type { Db } from '../platform/db/client.ts';
import type { Logger } from '../platform/logger.ts';
import type { Config } from '../platform/config.ts';

export type FeatureCore = { db: Db; audit: AuditLog; dataDir: string; logger: Logger; throttle: Pick<LoginThrottle, 'reserve'>; reportMinIntervalMin?: number };

/**
 * Every feature service, built once. Caches live inside them (each declared where it is kept, with what ends it), so
 * one instance per service means one cache: a second ConfigStore or OverviewService would keep a second copy.
 */
export type FeatureServices = {
  alerts: AlertService;
  /** Which area a gateway alarm's alert is raised in (issue 45 item 11). */
  alarmAreas: AlarmAreas;
  analysis: Analysis;
  auditTrail: AuditReader;
  avatars: AvatarStore;
  billing: BillingFeature;
  configs: ConfigStore;
  /** Re-keys stored energy when the site time zone changes; the collector pauses for it (service.ts). */
  zoneMove: TimeZoneMove;
  files: StoredFiles;
  models: StoredFiles;
  overview: OverviewService;
  energy: Energy;
  /** Multi-meter CSV/XLSX exports (GET /api/exports/energy). */
  exports: EnergyExport;
  faults: FaultService;
  maintenance: MaintenanceService;
  notificationRules: NotificationRules;
  reports: ReportService;
  users: UserDirectory;
};

/** The user service with auth's hashing and sign-in throttle wired in (users does not import auth). */
export function buildUserDirectory({ db, audit, dataDir, logger, throttle }: FeatureCore): UserDirectory {
  return new UserDirectory({
    db,
    audit,
    dataDir,
    logger,
    passwords: { hash: hashPassword, verify: verifyPassword, assertLength: assertPasswordLength },
    throttle: {
      reserve: (userId, login, address) => throttle.reserve(userId, login, address),
      unlock: (user) => unlockUser(db, user),
    },
  });
}

/** Constructing prepares statements only; nothing here writes to the database. */
export function buildFeatureServices(core: FeatureCore): FeatureServices {
  const energy = buildEnergy(core.db, core.audit);
  const analysis = buildAnalysis(core.db, core.audit, energy);
  const zoneMove = new TimeZoneMove({ db: core.db, store: energy.store, timezone: energy.timezone, logger: core.logger });
  return {
    alerts: new AlertService(core.db, core.audit),
    alarmAreas: new AlarmAreas(core.db, core.audit),
    analysis,
    auditTrail: new AuditReader(core.db),
    avatars: new AvatarStore(core.db, core.audit, core.dataDir),
    billing: buildBilling(core.db, core.audit, energy, analysis),
    configs: new ConfigStore(core.db, core.audit, zoneMove),
    zoneMove,
    files: createFileStore(core.db, core.audit, core.dataDir),
    models: createModelStore(core.db, core.audit, core.dataDir),
    overview: new OverviewService(core.db, energy.site, analysis.comparisons, analysis.demandCharges, energy.commodities),
    energy,
    faults: new FaultService(core.db, core.audit),
    maintenance: new MaintenanceService(core.db, core.audit),
    notificationRules: new NotificationRules(core.db, core.audit),
    reports: new ReportService(core.db, core.audit, core.reportMinIntervalMin),
    exports: new EnergyExport(core.db, energy.meters, energy.timezone),
    users: buildUserDirectory(core),
  };
}

export type PortalCore = {
  db: Db;
  audit: AuditLog;
  config: Config;
  logger: Logger;
  auth: AuthService;
  iot: IotGateway;
  collector: Collector;
  features: FeatureServices;
  startedAt: number;
};

export type PortalServices = { dashboard: DashboardService; wallboard: WallboardService; oauth: OAuthService };

/** The services that also need the gateway, the collector or sign-in: built once, after those, by createService. */
export function buildPortalServices({ db, audit, config, logger, auth, iot, collector, features, startedAt }: PortalCore): PortalServices {
  const { configs, overview, energy } = features;
  return {
    dashboard: new DashboardService(db, audit, {
      configs,
      energy: energy.areas,
      overview,
      gateway: () => {
        const health = iot.health();
        const collected = collector.health();
        return { state: publicGatewayState(health, collected), checkedAt: health.checkedAt, dataAt: collected.lastOkAt };
      },
    }),
    wallboard: new WallboardService(db, {
      configs,
      overview,
      areas: energy.areas,
      figures: energy.figures,
      site: energy.site,
      commodities: energy.commodities,
      collection: () => ({ intervalMs: config.collectIntervalMs, collector: collector.health(), gateway: iot.health().gateway, startedAt }),
      gatewayCheckedAt: () => iot.health().checkedAt,
    }),
    oauth: new OAuthService({ config, db, logger, auth, audit }),
  };
}
