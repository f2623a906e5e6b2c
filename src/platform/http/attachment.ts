// A downloaded file's name: the client's or our own name cleaned into harmless data, and the Content-Disposition that
// carries it (RFC 6266: an ASCII fallback every browser reads, the exact name as RFC 5987 filename*). Koa's own
// ctx.attachment() sends a Latin-1 name as raw bytes ("Café" arrives as "Caf\xe9", shown as "Cafý"): use this instead.
import type { Context } from 'koa';

/** Longest original name kept, in characters; longer names keep their start and their extension. */
export const MAX_ORIGINAL_NAME = 255;

/**
 * The client's file name as harmless data: the last path segment only (both slash kinds), no control or
 * bidi-override characters, trimmed, at most MAX_ORIGINAL_NAME characters. Never used to build a path.
 */
export function cleanOriginalName(raw: string | null | undefined, fallback = 'file'): string {
  let name = String(raw ?? '');
  name = name.slice(Math.max(name.lastIndexOf('/'), name.lastIndexOf('\\')) + 1);
  // C0/C1 controls (NUL, CR, LF, …) and the bidi controls that can disguise an extension ("exe.txt" shown as "txt.exe").
  name = name.replace(/[\u0000-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/g, '').trim();
  // A lone surrogate (a name may carry "&#55296;", decoded on receipt) would make encodeURIComponent throw later.
  name = name.replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, '\ufffd');
  if (name === '' || name === '.' || name === '..') return fallback;
  const chars = Array.from(name);
  if (chars.length > MAX_ORIGINAL_NAME) {
    const dot = name.lastIndexOf('.');
    const extension = dot > 0 ? Array.from(name.slice(dot)) : [];
    const keep = extension.length > 0 && extension.length <= 16 ? extension : [];
    name = chars.slice(0, MAX_ORIGINAL_NAME - keep.length).join('') + keep.join('');
  }
  return name;
}

/**
 * Content-Disposition with an ASCII fallback (quoted, no quote/backslash/percent) and the exact name as
 * RFC 5987 filename*; header injection is impossible because neither part can carry CR, LF or a quote.
 */
export function contentDisposition(type: 'attachment' | 'inline', name: string): string {
  const clean = cleanOriginalName(name);
  const ascii = clean.replace(/[^\x20-\x7e]|["\\%;]/g, '_');
  const encoded = encodeURIComponent(clean).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return `${type}; filename="${ascii}"; filename*=UTF-8''${encoded}`;
}

/** Marks the answer a download named `name` (the caller sets its type). */
export function setAttachment(ctx: Context, name: string): void {
  ctx.set('Content-Disposition', contentDisposition('attachment', name));
}
