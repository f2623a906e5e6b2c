// The site context, built once by the composition root: the site's settings and 3D configuration (one ConfigStore, one
// cache: the dashboard, the wallboard and the configs routes share it), and its routes.
import type { AuditLog } from '../platform/db/auditTrail.ts';
import type { Db } from '../platform/db/client.ts';
import type { Mailer } from '../platform/mail/mailer.ts';
import type { RouteGroups } from '../platform/http/route.ts';
import type { Module } from '../platform/jobs/module.ts';
import { configRoutes, type ConfigRouteNeeds } from './routes.ts';
import { ConfigStore, type SceneModels } from './service.ts';

/** The site's route table: its settings and 3D configuration. */
export function siteRouteGroups(needs: ConfigRouteNeeds): RouteGroups {
  return { configs: configRoutes(needs) };
}

export function buildSite({
  db,
  audit,
  zoneMove,
  mailer,
  price,
  models,
}: {
  db: Db;
  audit: AuditLog;
  /** The model files the scene names (files', a port: site does not import files). */
  models: SceneModels;
  zoneMove: ConstructorParameters<typeof ConfigStore>[3];
  /** The test mail of the mail settings (POST /api/configs/test-mail). */
  mailer: Mailer;
  /** The electricity price as the tariffs see it (issue 52: the set-up's price prices). */
  price?: ConstructorParameters<typeof ConfigStore>[4];
}): Module<{ configs: ConfigStore }> {
  const configs = new ConfigStore(db, audit, models, zoneMove, price);
  return { context: 'site', services: { configs }, routes: siteRouteGroups({ configs, mailer }) };
}
