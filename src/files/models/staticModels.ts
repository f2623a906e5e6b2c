// GET /static/models/<storedName>: public (the portal's 3D scene), koa-static over <data dir>/models/, nothing outside it.
import { createRequire } from 'node:module';
import type { Middleware } from 'koa';
import type serveStatic from 'koa-static';
import { MethodNotAllowed, NotFound } from '../../platform/errors.ts';
import { extensionOf, STORED_NAME_PATTERN } from '../uploads/fileNames.ts';
import { MODEL_TYPES } from '../uploads/mediaTypes.ts';
import { STATIC_MODELS_PATH } from './service.ts';

/** A stored name never changes its bytes (a new upload gets a new name), so caches may keep it for a year. */
const CACHE_CONTROL = 'public, max-age=31536000, immutable';

export function staticModels(modelsDir: string): Middleware {
  // koa-static (and koa-send) load on the first model request, not at start-up: idle RSS (issue 29).
  let send: Middleware | undefined;
  const sender = (): Middleware =>
    (send ??= (createRequire(import.meta.url)('koa-static') as typeof serveStatic)(modelsDir, {
      index: false,
      hidden: false,
      gzip: false,
      brotli: false,
      setHeaders(res, file, stats) {
        res.setHeader('Content-Type', MODEL_TYPES[extensionOf(file)] ?? 'application/octet-stream');
        res.setHeader('Cache-Control', CACHE_CONTROL);
        res.setHeader('ETag', `W/"${stats.size.toString(16)}-${stats.mtime.getTime().toString(16)}"`);
        res.setHeader('X-Content-Type-Options', 'nosniff');
      },
    }));
  const notFound = async () => {
    throw new NotFound('No such model file');
  };

  return async (ctx, next) => {
    if (!ctx.path.startsWith(STATIC_MODELS_PATH)) return next();
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') throw new MethodNotAllowed(ctx.method, ctx.path, ['GET', 'HEAD'], 'Model files are read-only here');
    // Only names we generate: one flat segment, no percent-encoding, no dots beyond the extension; "..%2f", "%2e%2e",
    // backslashes and nested paths never reach the file system. koa-send's own resolve-path check stays as a second wall.
    const name = ctx.path.slice(STATIC_MODELS_PATH.length);
    if (!STORED_NAME_PATTERN.test(name) || !Object.hasOwn(MODEL_TYPES, extensionOf(name))) throw new NotFound('No such model file');
    const requestPath = ctx.path;
    ctx.path = `/${name}`;
    try {
      await sender()(ctx, notFound);
    } finally {
      ctx.path = requestPath;
    }
    if (ctx.status === 200 && ctx.fresh) ctx.status = 304;
  };
}
