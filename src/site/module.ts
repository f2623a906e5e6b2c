// The site context, built once by the composition root: the site's settings and 3D configuration (one ConfigStore, one
// cache: the dashboard, the wallboard and the configs routes share it).
import type { AuditLog } from '../platform/db/auditTrail.ts';
import type { Db } from '../platform/db/client.ts';
import type { Module } from '../platform/jobs/module.ts';
import { ConfigStore } from './service.ts';

export function buildSite({
  db,
  audit,
  zoneMove,
}: {
  db: Db;
  audit: AuditLog;
  zoneMove: ConstructorParameters<typeof ConfigStore>[2];
}): Module<{ configs: ConfigStore }> {
  return { context: 'site', services: { configs: new ConfigStore(db, audit, zoneMove) } };
}
