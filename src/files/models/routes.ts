// /api/models: 3D model uploads (viewer reads, operator uploads and deletes); the files are public at /static/models/<storedName>.
import type { StoredFiles } from '../uploads/storedFiles.ts';
import type { Config } from '../../platform/config.ts';
import { MODEL_TYPES } from '../uploads/mediaTypes.ts';
import { storedFileRoutes } from '../uploads/storedFileRoutes.ts';
import { ModelView } from './schemas.ts';
import { acceptModelName, modelDownload, presentModel } from './service.ts';

export type ModelRouteNeeds = { models: StoredFiles; config: Config };

export function modelRoutes(deps: ModelRouteNeeds) {
  return storedFileRoutes(deps, {
    base: '/api/models',
    tag: 'models',
    noun: 'model',
    store: deps.models,
    view: ModelView,
    present: presentModel,
    download: modelDownload,
    downloadTypes: [...new Set(Object.values(MODEL_TYPES)), 'application/octet-stream'],
    accept: acceptModelName,
    uploadDescription:
      `One model per request in field "file" (${Object.keys(MODEL_TYPES).join(', ')}; 415 otherwise), at most ` +
      `EMS_UPLOAD_MAX_BYTES (now ${deps.config.uploadMaxBytes} bytes). The response's url serves it publicly for the 3D scene.`,
  });
}
