// The fault-detection context (issue 54), built once by the composition root after facility and site: the point model,
// the rule book (the shipped library written in at start), the episodes and the detector whose job evaluates the
// rules at every collection.
import type { AlertService, FaultService } from '../facility/index.ts';
import type { GatewayPort } from '../gateway/index.ts';
import type { Config } from '../platform/config.ts';
import type { AuditLog } from '../platform/db/auditTrail.ts';
import type { Db } from '../platform/db/client.ts';
import type { RouteGroups } from '../platform/http/route.ts';
import type { Module } from '../platform/jobs/module.ts';
import type { Logger } from '../platform/logger.ts';
import { siteSettings } from '../site/index.ts';
import { FaultDetector } from './detector.ts';
import { Episodes } from './episodes.ts';
import { PointModel } from './pointModel.ts';
import { RuleBook } from './ruleBook.ts';
import { faultDetectionRoutes, type FaultDetection, type FaultDetectionRouteNeeds } from './routes.ts';

export type { FaultDetection };

export type FaultDetectionNeeds = {
  config: Config;
  db: Db;
  /** The snooze is audited. */
  audit: AuditLog;
  logger: Logger;
  gateway: GatewayPort;
  faults: FaultService;
  alerts: AlertService;
  /** The detector's clock (tests move it with the collector's); the box's by default. */
  now?: () => number;
};

/** The fault-detection route table. */
export function faultDetectionRouteGroups(needs: FaultDetectionRouteNeeds): RouteGroups {
  return { faultDetection: faultDetectionRoutes(needs) };
}

export function buildFaultDetection({
  config,
  db,
  audit,
  logger,
  gateway,
  faults,
  alerts,
  now,
}: FaultDetectionNeeds): Module<{ faultDetection: FaultDetection }> {
  const settings = siteSettings(db);
  const price = () => ({ price: settings().electricityPrice, currency: settings().currency });
  const pointModel = new PointModel(db);
  const ruleBook = new RuleBook(db);
  ruleBook.ensureLibrary();
  const episodes = new Episodes(db, faults, audit, now);
  const detector = new FaultDetector({
    model: pointModel,
    book: ruleBook,
    episodes,
    alerts,
    port: gateway,
    price,
    timezone: () => settings().timezone,
    intervalMs: config.collectIntervalMs,
    floodPerHour: config.fddFloodPerHour,
    logger,
    now,
  });
  const faultDetection = { pointModel, ruleBook, episodes, detector, gateway, price };
  const job = detector.job;
  return {
    context: 'faultDetection',
    services: { faultDetection },
    routes: faultDetectionRouteGroups({ faultDetection }),
    running: job ? [{ name: 'fault rule evaluation', start: () => job.start(), jobs: [job], stop: () => job.stop() }] : [],
  };
}
