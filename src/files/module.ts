// The files context, built once by the composition root: stored files, 3D models and avatars under the data dir.
import type { AuditLog } from '../platform/db/auditTrail.ts';
import type { Db } from '../platform/db/client.ts';
import type { Module } from '../platform/jobs/module.ts';
import { createModelStore } from './models/service.ts';
import { createFileStore } from './service.ts';
import { AvatarStore } from './uploads/avatarStore.ts';
import type { StoredFiles } from './uploads/storedFiles.ts';

export type Files = { files: StoredFiles; models: StoredFiles; avatars: AvatarStore };

export function buildFiles({ db, audit, dataDir }: { db: Db; audit: AuditLog; dataDir: string }): Module<Files> {
  return {
    context: 'files',
    services: { avatars: new AvatarStore(db, audit, dataDir), files: createFileStore(db, audit, dataDir), models: createModelStore(db, audit, dataDir) },
  };
}
