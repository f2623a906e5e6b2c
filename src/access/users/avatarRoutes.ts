// /api/users/:id/avatar: anyone signed in may see it; only the user or an admin may replace or remove it.
import { type AvatarStore, AVATAR_MAX_BYTES, withUpload, BinaryBody, sendStoredFile } from '../../files/index.ts';
import type { Config } from '../../platform/config.ts';
import path from 'node:path';
import { Type } from '@sinclair/typebox';
import { Forbidden } from '../../platform/errors.ts';
import { defineRoute, Reply, type AuthUser } from '../../platform/http/route.ts';
import { ErrorBody, IdParams } from '../../platform/http/schemas.ts';

const tags = ['users'];
const AvatarSet = Type.Object({ avatarUrl: Type.String() });

/** Checked before a byte of the body is read. */
function assertSelfOrAdmin(user: AuthUser, userId: number): void {
  if (user.id !== userId && user.role !== 'admin') throw new Forbidden('Only the user or an admin may change this avatar');
}

export type AvatarRouteNeeds = { avatars: AvatarStore; config: Config };

export function avatarRoutes({ avatars, config }: AvatarRouteNeeds) {
  const tmpDir = path.join(config.dataDir, 'tmp');
  return [
    defineRoute({
      method: 'PUT',
      path: '/api/users/:id/avatar',
      access: 'viewer',
      summary: 'Set the avatar (self or admin)',
      description: `Multipart field "file": a PNG, JPEG or WebP image of at most ${AVATAR_MAX_BYTES} bytes. The type is read from the bytes; anything else is 415.`,
      tags,
      bodyType: 'multipart',
      schemas: { params: IdParams, response: { 200: AvatarSet, 403: ErrorBody, 404: ErrorBody, 413: ErrorBody, 415: ErrorBody } },
      handler: async ({ params, user, ctx }) => {
        assertSelfOrAdmin(user, params.id);
        avatars.user(params.id);
        return withUpload(ctx.req, { tmpDir, maxBytes: AVATAR_MAX_BYTES }, (upload) => avatars.replace(params.id, upload, user));
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/api/users/:id/avatar',
      access: 'viewer',
      summary: "A user's avatar image",
      description:
        'The image as uploaded (PNG, JPEG or WebP), with an ETag (If-None-Match → 304) and Range support. 404 when the user has none. Changes nothing.',
      tags,
      raw: { contentType: 'image/png', contentTypes: ['image/png', 'image/jpeg', 'image/webp'], storedFile: true },
      schemas: { params: IdParams, response: { 200: BinaryBody, 404: ErrorBody } },
      handler: ({ params, ctx }) => sendStoredFile(ctx, avatars.bytes(params.id)),
    }),
    defineRoute({
      method: 'DELETE',
      path: '/api/users/:id/avatar',
      access: 'viewer',
      summary: 'Remove the avatar (self or admin)',
      description: "Deletes the image; avatarUrl becomes null. A user may remove their own; admins anyone's (403 otherwise).",
      tags,
      schemas: { params: IdParams, response: { 204: Type.Null(), 403: ErrorBody, 404: ErrorBody } },
      handler: async ({ params, user }) => {
        assertSelfOrAdmin(user, params.id);
        await avatars.remove(params.id, user);
        return new Reply(204, null);
      },
    }),
  ];
}
