// Streams stored bytes to the client: safe type and disposition, ETag, conditional GET, one HTTP range.
import fs from 'node:fs';
import type { Context } from 'koa';
import { NotFound, RangeNotSatisfiable } from '../../platform/errors.ts';
import { contentDisposition } from '../../platform/http/attachment.ts';

export type StoredBytes = {
  path: string;
  /** Strong validator of these exact bytes (a SHA-256, or a stored name that is never reused), unquoted. */
  etag: string;
  /** Already decided by the caller from an allow-list (servedType / a sniffed image type). */
  contentType: string;
  downloadName: string;
  disposition: 'attachment' | 'inline';
};

export type ByteRange = { start: number; end: number };

/**
 * One `bytes=` range against a size: the range, 'unsatisfiable' (→ 416), or null when the header is to be
 * ignored (malformed, or several ranges: RFC 9110 lets a server answer those with the whole file).
 */
export function parseRange(header: string, size: number): ByteRange | 'unsatisfiable' | null {
  const match = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!match || (match[1] === '' && match[2] === '')) return null;
  if (match[1] === '') {
    const suffix = Number(match[2]);
    if (suffix === 0 || size === 0) return 'unsatisfiable';
    return { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(match[1]);
  const last = match[2] === '' ? Infinity : Number(match[2]);
  if (last < start) return null;
  if (start >= size) return 'unsatisfiable';
  return { start, end: Math.min(last, size - 1) };
}

/** If-Range: the range applies only while the client's validator still matches (strong ETag or exact date). */
function rangeStillValid(ifRange: string, etag: string, lastModified: string): boolean {
  if (!ifRange) return true;
  if (ifRange.startsWith('"') || ifRange.startsWith('W/')) return ifRange === etag;
  return ifRange === lastModified;
}

export async function sendStoredFile(ctx: Context, file: StoredBytes): Promise<void> {
  let stat: fs.Stats;
  try {
    stat = await fs.promises.stat(file.path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new NotFound('The stored bytes of this file are missing');
    throw error;
  }
  const size = stat.size;
  const etag = `"${file.etag}"`;
  const lastModified = stat.mtime.toUTCString();
  const rangeHeader = ctx.get('Range');
  const range = rangeHeader && rangeStillValid(ctx.get('If-Range'), etag, lastModified) ? parseRange(rangeHeader, size) : null;
  // Decided before any header is set, so the 416 error body does not go out with download headers.
  if (range === 'unsatisfiable') throw new RangeNotSatisfiable(size);

  ctx.status = 200;
  ctx.set('ETag', etag);
  ctx.set('Last-Modified', lastModified);
  ctx.set('Accept-Ranges', 'bytes');
  // Behind a bearer token: browsers and proxies may keep it only for this user and must revalidate (cheap: 304 on ETag).
  ctx.set('Cache-Control', 'private, no-cache');
  ctx.set('Content-Disposition', contentDisposition(file.disposition, file.downloadName));
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.set('Content-Type', file.contentType);
  if (ctx.fresh) {
    ctx.status = 304;
    return;
  }
  if (range) {
    ctx.status = 206;
    ctx.set('Content-Range', `bytes ${range.start}-${range.end}/${size}`);
    ctx.body = fs.createReadStream(file.path, { start: range.start, end: range.end });
    ctx.length = range.end - range.start + 1;
    return;
  }
  ctx.body = fs.createReadStream(file.path);
  ctx.length = size;
}
