// Schemas of /api/files: uploaded documents, images and other attachments.
import { Type, type Static } from '@sinclair/typebox';
import { Page } from '../platform/http/schemas.ts';
import { storedFileFields } from './uploads/schemas.ts';

export const FileView = Type.Object(storedFileFields);
export type FileView = Static<typeof FileView>;
export const FilePage = Page(FileView);
