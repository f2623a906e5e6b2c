// The files context, built once by the composition root: stored files, 3D models and avatars under the data dir.
import type { AuditLog } from '../platform/db/auditTrail.ts';
import type { Db } from '../platform/db/client.ts';
import type { Config } from '../platform/config.ts';
import type { RouteGroups } from '../platform/http/route.ts';
import type { Module } from '../platform/jobs/module.ts';
import { modelRoutes, type ModelRouteNeeds } from './models/routes.ts';
import { createModelStore, type SceneModelRef } from './models/service.ts';
import { fileRoutes, type FileRouteNeeds } from './routes.ts';
import { createFileStore } from './service.ts';
import { AvatarStore, type AvatarColumns } from './uploads/avatarStore.ts';
import type { StoredFiles } from './uploads/storedFiles.ts';

export type Files = { files: StoredFiles; models: StoredFiles; avatars: AvatarStore };

/** The files context's route tables: stored files and 3D models (the avatars' routes are access's). */
export function filesRouteGroups(needs: FileRouteNeeds & ModelRouteNeeds): RouteGroups {
  return { files: fileRoutes(needs), models: modelRoutes(needs) };
}

export function buildFiles({
  db,
  audit,
  config,
  avatarColumns,
  scene,
}: {
  db: Db;
  audit: AuditLog;
  config: Config;
  avatarColumns: AvatarColumns;
  /** The scene's reference to a model, cleared when the model is deleted (site's, a port). */
  scene: SceneModelRef;
}): Module<Files> {
  const { dataDir } = config;
  const services = {
    avatars: new AvatarStore(db, audit, dataDir, avatarColumns),
    files: createFileStore(db, audit, dataDir),
    models: createModelStore(db, audit, dataDir, scene),
  };
  return { context: 'files', services, routes: filesRouteGroups({ ...services, config }) };
}
