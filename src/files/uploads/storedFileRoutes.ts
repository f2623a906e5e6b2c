// The route table every stored-upload resource shares (list, upload, metadata, raw bytes, delete); files and models fill it in.
import type { Config } from '../../platform/config.ts';
import path from 'node:path';
import { Type, type TSchema } from '@sinclair/typebox';
import { defineRoute, Reply } from '../../platform/http/route.ts';
import { ErrorBody, IdParams, Page } from '../../platform/http/schemas.ts';
import { withUpload } from './receiveUpload.ts';
import { BinaryBody, StoredFileListQuery } from './schemas.ts';
import { sendStoredFile, type StoredBytes } from './sendFile.ts';
import type { StoredFileRow, StoredFiles } from './storedFiles.ts';

export type StoredFileResource = {
  /** "/api/files" */
  base: string;
  tag: string;
  /** "file", "model": for summaries */
  noun: string;
  store: StoredFiles;
  view: TSchema;
  present(row: StoredFileRow): unknown;
  download(store: StoredFiles, row: StoredFileRow): StoredBytes;
  /** Refuse a part by its name/claimed type before its bytes are stored. */
  accept?(originalName: string, claimedType: string): void;
  uploadDescription: string;
  /** Every Content-Type a download can carry (the reference lists them). */
  downloadTypes: readonly string[];
};

export function storedFileRoutes({ config }: { config: Config }, resource: StoredFileResource) {
  const { base, noun, store, present } = resource;
  const tags = [resource.tag];
  const tmpDir = path.join(config.dataDir, 'tmp');
  return [
    defineRoute({
      method: 'GET',
      path: base,
      access: 'viewer',
      summary: `List ${noun}s, newest first`,
      description: 'A page of the uploaded records, newest first (metadata only). Changes nothing.',
      tags,
      schemas: { query: StoredFileListQuery, response: { 200: Page(resource.view) } },
      handler: ({ query }) => {
        const page = store.page(query);
        return { ...page, items: page.items.map(present) };
      },
    }),
    defineRoute({
      method: 'POST',
      path: base,
      access: 'operator',
      summary: `Upload one ${noun} (multipart field "file")`,
      description: resource.uploadDescription,
      tags,
      bodyType: 'multipart',
      schemas: { response: { 201: resource.view, 400: ErrorBody, 413: ErrorBody, 415: ErrorBody } },
      handler: async ({ ctx, user }) => {
        const row = await withUpload(ctx.req, { tmpDir, maxBytes: config.uploadMaxBytes, accept: resource.accept }, (upload) => store.keep(upload, user));
        return new Reply(201, present(row), { Location: `${base}/${row.id}` });
      },
    }),
    defineRoute({
      method: 'GET',
      path: `${base}/:id`,
      access: 'viewer',
      summary: `Metadata of one ${noun}`,
      description: 'Name, type, size, SHA-256 and who uploaded it; the bytes are at .../raw. Changes nothing.',
      tags,
      schemas: { params: IdParams, response: { 200: resource.view, 404: ErrorBody } },
      handler: ({ params }) => present(store.get(params.id)),
    }),
    defineRoute({
      method: 'GET',
      path: `${base}/:id/raw`,
      access: 'viewer',
      summary: `The bytes of one ${noun}`,
      description:
        'Streams the stored bytes as an attachment with Content-Length, an ETag (the SHA-256; If-None-Match → 304) and ' +
        'X-Content-Type-Options: nosniff. One `Range: bytes=a-b` is honoured (206 with Content-Range; 416 when it lies ' +
        'beyond the end; If-Range respected); several ranges get the whole file.',
      tags,
      raw: { contentType: 'application/octet-stream', contentTypes: resource.downloadTypes, storedFile: true },
      schemas: { params: IdParams, response: { 200: BinaryBody, 404: ErrorBody, 416: ErrorBody } },
      handler: async ({ params, ctx }) => {
        const row = store.get(params.id);
        await sendStoredFile(ctx, resource.download(store, row));
      },
    }),
    defineRoute({
      method: 'DELETE',
      path: `${base}/:id`,
      access: 'operator',
      summary: `Delete a ${noun}: its row and its bytes`,
      description: 'Removes the record and its stored bytes. Audited.',
      tags,
      schemas: { params: IdParams, response: { 204: Type.Null(), 404: ErrorBody } },
      handler: async ({ params, user }) => {
        await store.delete(params.id, user);
        return new Reply(204, null);
      },
    }),
  ];
}
