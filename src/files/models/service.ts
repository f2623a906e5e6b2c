// 3D model files: glTF/GLB/FBX/OBJ/STL by extension, bytes under <data dir>/models/ (served at /static/models/), rows in `model_files`.
import path from 'node:path';
import type { AuditLog } from '../../platform/db/auditTrail.ts';
import type { Db } from '../../platform/db/client.ts';
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

/**
 * The port to the scene's reference to a model (site's sceneModelRef, handed in by the composition root: files is built
 * before site, which owns three_d_config).
 */
export type SceneModelRef = { unlink(modelId: number): void };

export function createModelStore(db: Db, audit: AuditLog, dataDir: string, scene: SceneModelRef): StoredFiles {
  // three_d_config.model_file_id has no foreign key; a deleted model must not stay the scene's model (in the delete's transaction).
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
    onDelete: (id) => scene.unlink(id),
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
