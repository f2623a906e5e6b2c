// Uploaded files: bytes under <data dir>/uploads/ with generated names, rows in `files`; the client's type is recorded as a claim.
import path from 'node:path';
import type { AuditLog } from '../platform/db/auditTrail.ts';
import type { Db } from '../platform/db/client.ts';
import { servedType } from './uploads/mediaTypes.ts';
import type { StoredBytes } from './uploads/sendFile.ts';
import { StoredFiles, type StoredFileRow } from './uploads/storedFiles.ts';
import type { FileView } from './schemas.ts';

export function createFileStore(db: Db, audit: AuditLog, dataDir: string): StoredFiles {
  return new StoredFiles(db, audit, {
    table: 'files',
    resource: 'files',
    noun: 'File',
    directory: path.join(dataDir, 'uploads'),
    // No extension on disk: the stored name never decides how the bytes are served.
    classify: (upload) => ({ extension: '', mimeType: upload.claimedType }),
  });
}

export function presentFile(row: StoredFileRow): FileView {
  return {
    id: row.id,
    originalName: row.originalName,
    storedName: row.storedName,
    mimeType: row.mimeType,
    size: row.size,
    sha256: row.sha256,
    uploadedBy: row.uploadedBy,
    createdAt: row.createdAt,
    downloadUrl: `/api/files/${row.id}/raw`,
  };
}

/** Always an attachment; HTML, SVG, XML and anything unknown go out as application/octet-stream. */
export function fileDownload(store: StoredFiles, row: StoredFileRow): StoredBytes {
  return { path: store.pathOf(row), etag: row.sha256, contentType: servedType(row.mimeType), downloadName: row.originalName, disposition: 'attachment' };
}
