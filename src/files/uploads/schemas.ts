// Response and query schemas shared by every stored-upload resource (files, models).
import { Type } from '@sinclair/typebox';
import { PageQuery, Timestamp } from '../../platform/http/schemas.ts';

export const storedFileFields = {
  id: Type.Integer(),
  originalName: Type.String({ description: "The client's file name, cleaned (last path segment, no control characters, at most 255 characters); data only" }),
  storedName: Type.String({ description: 'Generated name on disk' }),
  mimeType: Type.String({ description: 'Recorded media type; downloads use it only when it is on a safe list, else application/octet-stream' }),
  size: Type.Integer({ minimum: 0, description: 'Bytes' }),
  sha256: Type.String({ pattern: '^[a-f0-9]{64}$', description: 'Hex SHA-256 of the bytes; also the download ETag' }),
  uploadedBy: Type.Union([Type.Integer(), Type.Null()], { description: 'User id; null once that user is deleted' }),
  createdAt: Timestamp,
  downloadUrl: Type.String({ description: 'GET it with the bearer token for the bytes (Range supported)' }),
};

export const StoredFileListQuery = Type.Object({
  ...PageQuery,
  q: Type.Optional(Type.String({ maxLength: 200, description: 'Substring of the original name, case-insensitive' })),
});

export const BinaryBody = Type.String({ format: 'binary', description: 'The raw bytes' });
