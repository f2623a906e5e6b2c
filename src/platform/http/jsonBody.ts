// The JSON body of a JSON route, read straight off the request: the same answers as koa-body's JSON path, without its layers.
import zlib from 'node:zlib';
import type { Middleware } from 'koa';

/** Methods whose body is read (koa-body's default): a body sent with any other method is ignored. */
const READ_METHODS = new Set(['POST', 'PUT', 'PATCH']);
/** Strict JSON (co-body's rule): the text must open an object or an array. */
const OPENS_OBJECT_OR_ARRAY = /^[\x20\x09\x0a\x0d]*[[{]/;
/** A "__proto__" key, however escaped (@hapi/bourne's test): only then is the parsed value scanned. */
const SUSPECT_PROTO =
  /"(?:_|\\u005[Ff])(?:_|\\u005[Ff])(?:p|\\u0070)(?:r|\\u0072)(?:o|\\u006[Ff])(?:t|\\u0074)(?:o|\\u006[Ff])(?:_|\\u005[Ff])(?:_|\\u005[Ff])"\s*:/;

function httpError(status: number, message: string, expose: boolean): Error {
  return Object.assign(new Error(message), { status, expose });
}

type Inflate = (bytes: Buffer, options: { maxOutputLength: number }) => Buffer;
const INFLATE: Record<string, Inflate | undefined> = {
  gzip: zlib.gunzipSync,
  'x-gzip': zlib.gunzipSync,
  deflate: zlib.inflateSync,
  br: zlib.brotliDecompressSync,
};

/** Synchronous: the input is at most the body limit and the output is capped at it too (~2 ms for 1 MiB). */
function inflated(inflate: Inflate, bytes: Buffer, limitBytes: number, encoding: string): Buffer {
  if (bytes.length === 0) return bytes;
  try {
    return inflate(bytes, { maxOutputLength: limitBytes });
  } catch (error) {
    if ((error as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') throw httpError(413, 'request entity too large', true);
    throw httpError(400, `The body is not valid ${encoding} data (Content-Encoding: ${encoding})`, true);
  }
}

function hasProtoKey(value: unknown): boolean {
  let next = [value];
  while (next.length > 0) {
    const nodes = next;
    next = [];
    for (const node of nodes) {
      if (Object.prototype.hasOwnProperty.call(node, '__proto__')) return true;
      for (const key in node as object) {
        const item = (node as Record<string, unknown>)[key];
        if (item && typeof item === 'object') next.push(item);
      }
    }
  }
  return false;
}

/**
 * koa-body's JSON reading runs each body through inflation, raw-body, iconv-lite, co-body and bourne. This reads the
 * bytes itself and answers as it did: over `limitBytes` 413 (declared or received), a body that is not an object or
 * array or not JSON, or that carries a `__proto__` key, 400; empty is `{}`; UTF-8 (a BOM is dropped, a declared
 * charset ignored, as iconv-lite did). A body sent with `Content-Encoding: gzip`, `deflate` or `br` is inflated here,
 * to at most `limitBytes` again (a small bomb cannot inflate to gigabytes): a body that does not decode as its
 * declared encoding is a client's mistake, 400 without an error line (koa-body answered 500 and logged it, also on
 * anonymous sign-in); any other encoding is 415.
 */
export function leanJsonBody(limitBytes: number): Middleware {
  return async (ctx, next) => {
    const req = ctx.req;
    if (!READ_METHODS.has(ctx.method)) return next();
    const encoding = (req.headers['content-encoding'] ?? 'identity').trim().toLowerCase();
    const inflate = INFLATE[encoding];
    if (encoding !== 'identity' && !inflate)
      throw httpError(415, `Unsupported Content-Encoding "${encoding.slice(0, 32)}": send gzip, deflate, br or none`, true);
    const declared = req.headers['content-length'];
    if (declared !== undefined && Number(declared) > limitBytes) throw httpError(413, 'request entity too large', true);
    const bytes = await new Promise<Buffer>((resolve, reject) => {
      const chunks: Buffer[] = [];
      let size = 0;
      let settled = false;
      const finish = (error: Error | null, value?: Buffer) => {
        if (settled) return;
        settled = true;
        req.off('data', onData);
        req.off('end', onEnd);
        req.off('close', onClose);
        req.off('error', onError);
        if (error) reject(error);
        else resolve(value!);
      };
      const onData = (chunk: Buffer) => {
        size += chunk.length;
        if (size > limitBytes) {
          // What is left of the body is drained by Node once the 413 is answered.
          req.pause();
          finish(httpError(413, 'request entity too large', true));
        } else chunks.push(chunk);
      };
      const onEnd = () => finish(null, chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size));
      const onClose = () => finish(httpError(400, 'request aborted', false));
      const onError = (error: Error) => finish(Object.assign(error, { status: 400, expose: false }));
      req.on('data', onData);
      req.once('end', onEnd);
      req.once('close', onClose);
      req.once('error', onError);
    });
    let text = (inflate ? inflated(inflate, bytes, limitBytes, encoding) : bytes).toString('utf8');
    if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    let body: unknown = {};
    if (text !== '') {
      if (!OPENS_OBJECT_OR_ARRAY.test(text)) throw httpError(400, 'invalid JSON, only supports object and array', false);
      try {
        body = JSON.parse(text);
      } catch {
        throw httpError(400, 'invalid JSON', false);
      }
      if (SUSPECT_PROTO.test(text) && hasProtoKey(body)) throw httpError(400, 'Object contains forbidden prototype property', false);
    }
    ctx.request.body = body as typeof ctx.request.body;
    return next();
  };
}
