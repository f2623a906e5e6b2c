// The facility context, built once by the composition root: alerts, alarm areas, faults, maintenance, notification
// rules, the notifier that mails raised alerts and the poller that takes the gateway's alarms in.
import type { IotGateway } from '../gateway/index.ts';
import type { AuditLog } from '../platform/db/auditTrail.ts';
import type { Db } from '../platform/db/client.ts';
import type { Config } from '../platform/config.ts';
import type { RouteGroups } from '../platform/http/route.ts';
import type { Module } from '../platform/jobs/module.ts';
import type { Logger } from '../platform/logger.ts';
import type { Mailer } from '../platform/mail/mailer.ts';
import { mailBaseUrl, siteMailReader, type SiteMailSettings } from '../platform/mail/siteMail.ts';
import { alarmAreaRoutes, type AlarmAreaRouteNeeds } from './alarmAreas/routes.ts';
import { AlarmAreas, type AreaSources } from './alarmAreas/service.ts';
import { alertRoutes, type AlertRouteNeeds } from './alerts/routes.ts';
import { AlertService } from './alerts/service.ts';
import { faultRoutes, type FaultRouteNeeds } from './faults/routes.ts';
import { FaultService } from './faults/service.ts';
import { maintenanceRoutes, type MaintenanceRouteNeeds } from './maintenance/routes.ts';
import { MaintenanceService } from './maintenance/service.ts';
import { AlarmNotifier } from './notifications/notifier.ts';
import { AlarmPoller } from './notifications/poller.ts';
import { alarmRoutes, type AlarmRouteNeeds } from './notifications/routes.ts';
import { NotificationRules } from './notifications/rules.ts';

export type Facility = {
  alerts: AlertService;
  /** Which area a gateway alarm's alert is raised in (issue 45 item 11). */
  alarmAreas: AlarmAreas;
  faults: FaultService;
  maintenance: MaintenanceService;
  notificationRules: NotificationRules;
  notifier: AlarmNotifier;
};

export type FacilityNeeds = {
  config: Config;
  db: Db;
  audit: AuditLog;
  logger: Logger;
  mailer: Mailer;
  iot: IotGateway;
  /** The site's name, locale, zone and currency for the mails (site's settings, a port: facility is built before site). */
  siteSettings: SiteMailSettings;
  /** The area names the site knows (metering's meters, energy's cards: a port, facility is built before both). */
  areas: AreaSources;
};

export type FacilityRouteNeeds = AlertRouteNeeds & FaultRouteNeeds & AlarmRouteNeeds & AlarmAreaRouteNeeds & MaintenanceRouteNeeds;

/** The facility's route tables: alerts, faults, notification rules, alarm areas, maintenance. */
export function facilityRouteGroups(needs: FacilityRouteNeeds): RouteGroups {
  return {
    alerts: alertRoutes(needs),
    faults: faultRoutes(needs),
    alarms: alarmRoutes(needs),
    alarmAreas: alarmAreaRoutes(needs),
    maintenance: maintenanceRoutes(needs),
  };
}

export function buildFacility({ config, db, audit, logger, mailer, iot, siteSettings, areas }: FacilityNeeds): Module<Facility> {
  const alerts = new AlertService(db, audit);
  const alarmAreas = new AlarmAreas(db, audit, areas);
  const faults = new FaultService(db, audit);
  // Writes keep the fault snapshot by deltas; one recount at start gives them a base that matches the table.
  faults.recountStats();
  const notifier = new AlarmNotifier({
    db,
    mailer,
    logger,
    publicUrl: config.publicUrl,
    siteMail: siteMailReader(siteSettings, mailBaseUrl(config.publicUrl, config.portalOrigin)),
  });
  const alarmPoller = new AlarmPoller({ iot, alerts, areas: alarmAreas, logger, intervalMs: config.alarmPollIntervalMs });
  const polling = config.alarmPollIntervalMs > 0;
  const services = {
    alerts,
    alarmAreas,
    faults,
    maintenance: new MaintenanceService(db, audit),
    notificationRules: new NotificationRules(db, audit),
    notifier,
  };
  return {
    context: 'facility',
    services,
    routes: facilityRouteGroups(services),
    running: [
      {
        name: 'alert notifications',
        // Wired as it starts, not before: an alert raised earlier in the start (a report run left failed) is not mailed.
        start: () => {
          alerts.onCreated((alert) => notifier.alertRaised(alert));
          notifier.start();
        },
        // The escalation job exists once the notifier started: read after start.
        get jobs() {
          return notifier.escalationJob ? [notifier.escalationJob] : [];
        },
        stop: () => notifier.stop(),
      },
      {
        name: 'gateway alarm poller',
        start: polling ? () => alarmPoller.start() : undefined,
        jobs: polling ? [alarmPoller.job] : [],
        stop: () => alarmPoller.stop(),
      },
    ],
  };
}
