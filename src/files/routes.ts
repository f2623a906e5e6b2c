// /api/files: viewer reads, operator uploads and deletes (DESIGN.md roles).
import type { StoredFiles } from './uploads/storedFiles.ts';
import type { Config } from '../platform/config.ts';
import { SERVABLE_TYPES } from './uploads/mediaTypes.ts';
import { storedFileRoutes } from './uploads/storedFileRoutes.ts';
import { FileView } from './schemas.ts';
import { fileDownload, presentFile } from './service.ts';

export type FileRouteNeeds = { files: StoredFiles; config: Config };

export function fileRoutes(deps: FileRouteNeeds) {
  return storedFileRoutes(deps, {
    base: '/api/files',
    tag: 'files',
    noun: 'file',
    store: deps.files,
    view: FileView,
    present: presentFile,
    download: fileDownload,
    downloadTypes: [...SERVABLE_TYPES, 'application/octet-stream'],
    uploadDescription:
      `One file per request in field "file", at most EMS_UPLOAD_MAX_BYTES (now ${deps.config.uploadMaxBytes} bytes; 413 above). ` +
      'The bytes stream to disk (never held in memory) while their SHA-256 is computed; the name on disk is generated.',
  });
}
