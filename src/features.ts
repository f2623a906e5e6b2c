// Builds the feature services once, from the core pieces; the route tables and emsctl are handed them from here.
import { AlertService } from './alerts/service.ts';
import { NotificationRules } from './alarms/rules.ts';
import type { LoginThrottle } from './auth/loginThrottle.ts';
import { unlockUser } from './auth/loginThrottle.ts';
import { assertPasswordLength, hashPassword, verifyPassword } from './auth/passwords.ts';
import type { AuditLog } from './db/auditTrail.ts';
import type { Db } from './db/client.ts';
import { buildEnergy, type Energy } from './energy/module.ts';
import { buildAnalysis, type Analysis } from './analysis/module.ts';
import { FaultService } from './faults/service.ts';
import type { Logger } from './logger.ts';
import { MaintenanceService } from './maintenance/service.ts';
import { ReportService } from './reports/service.ts';
import { UserDirectory } from './users/service.ts';

export type FeatureCore = { db: Db; audit: AuditLog; dataDir: string; logger: Logger; throttle: Pick<LoginThrottle, 'reserve'>; reportMinIntervalMin?: number };

export type FeatureServices = {
  alerts: AlertService;
  analysis: Analysis;
  energy: Energy;
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
  return {
    alerts: new AlertService(core.db, core.audit),
    analysis: buildAnalysis(core.db, core.audit, energy),
    energy,
    faults: new FaultService(core.db, core.audit),
    maintenance: new MaintenanceService(core.db, core.audit),
    notificationRules: new NotificationRules(core.db, core.audit),
    reports: new ReportService(core.db, core.audit, core.reportMinIntervalMin),
    users: buildUserDirectory(core),
  };
}
