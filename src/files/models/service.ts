// 3D model files: glTF/GLB/FBX/OBJ/STL by extension, bytes under <data dir>/models/ (served at /static/models/), rows in `model_files`.
import path from 'node:path';
import { eq, sql } from 'drizzle-orm';
import type { AuditLog } from '../../platform/db/auditTrail.ts';
import type { Db } from '../../platform/db/client.ts';
import { threeDConfig } from '../../platform/db/schema/index.ts';
import { UnsupportedMediaType } from '../../platform/errors.ts';
import { extensionOf } from '../uploads/fileNames.ts';
import { MODEL_TYPES } from '../uploads/mediaTypes.ts';
import type { StoredBytes } from '../uploads/sendFile.ts';
import { StoredFiles, type StoredFileRow } from '../uploads/storedFiles.ts';
import type { ModelView } from './schemas.ts';

export const STATIC_MODELS_PATH = '/static/models/';

const ACCEPTED = Object.keys(MODEL_TYPES).join(', ');

/** Refuses a model by its name before any byte is stored: the extension decides the public content type. */
export function acceptModelName(originalName: string): void {
  if (!Object.hasOwn(MODEL_TYPES, extensionOf(originalName))) {
    throw new UnsupportedMediaType(`A model file must be one of ${ACCEPTED}; got "${originalName}"`);
  }
}

export function createModelStore(db: Db, audit: AuditLog, dataDir: string): StoredFiles {
  // three_d_config.model_file_id has no foreign key; a deleted model must not stay the scene's model. Not an edit of
  // the scene: updated_at stays (drizzle's onUpdate default would be the time of preparing).
  const unlinkScene = db.orm
    .update(threeDConfig)
    .set({ modelFileId: null, updatedAt: sql`${threeDConfig.updatedAt}` })
    .where(eq(threeDConfig.modelFileId, sql.placeholder('id')))
    .prepare();
  return new StoredFiles(db, audit, {
    table: 'model_files',
    resource: 'models',
    noun: 'Model',
    directory: path.join(dataDir, 'models'),
    classify: (upload) => {
      const extension = extensionOf(upload.originalName);
      acceptModelName(upload.originalName);
      return { extension, mimeType: MODEL_TYPES[extension] };
    },
    onDelete: (id) => unlinkScene.run({ id }),
  });
}

export function presentModel(row: StoredFileRow): ModelView {
  return {
    id: row.id,
    originalName: row.originalName,
    storedName: row.storedName,
    mimeType: row.mimeType,
    size: row.size,
    sha256: row.sha256,
    uploadedBy: row.uploadedBy,
    createdAt: row.createdAt,
    downloadUrl: `/api/models/${row.id}/raw`,
    url: `${STATIC_MODELS_PATH}${row.storedName}`,
  };
}

export function modelDownload(store: StoredFiles, row: StoredFileRow): StoredBytes {
  return {
    path: store.pathOf(row),
    etag: row.sha256,
    contentType: MODEL_TYPES[extensionOf(row.storedName)] ?? 'application/octet-stream',
    downloadName: row.originalName,
    disposition: 'attachment',
  };
}
