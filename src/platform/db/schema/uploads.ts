// Uploaded files and 3D model files: metadata rows; the bytes live under the data dir with generated names.
import { index, integer, sqliteTable, text } from 'drizzle-orm/sqlite-core';
import { createdAt, id } from './columns.ts';
import { users } from './users.ts';

function uploadColumns() {
  return {
    id: id(),
    originalName: text('original_name').notNull(),
    storedName: text('stored_name').notNull().unique(),
    mimeType: text('mime_type').notNull(),
    size: integer('size').notNull(),
    sha256: text('sha256').notNull(),
    uploadedBy: integer('uploaded_by').references(() => users.id, { onDelete: 'set null' }),
    createdAt: createdAt(),
  };
}

export const files = sqliteTable('files', uploadColumns(), (t) => [index('files_created_idx').on(t.createdAt)]);
export const modelFiles = sqliteTable('model_files', uploadColumns(), (t) => [index('model_files_created_idx').on(t.createdAt)]);
