// Names around stored bytes: generated names on disk and their extensions (the client's name is cleaned by platform/http/attachment.ts).
import { randomBytes } from 'node:crypto';

/** A stored name is ours alone: 32 hex characters plus an optional lower-case extension from an allow-list. */
export const STORED_NAME_PATTERN = /^[a-f0-9]{32}(\.[a-z0-9]{1,8})?$/;

export function generateStoredName(extension = ''): string {
  return `${randomBytes(16).toString('hex')}${extension}`;
}

/** The lower-case extension of a client name (".glb"), or "" when there is none. */
export function extensionOf(name: string): string {
  const dot = name.lastIndexOf('.');
  return dot > 0 ? name.slice(dot).toLowerCase() : '';
}
