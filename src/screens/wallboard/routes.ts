// The wallboard page (GET / and /wallboard), its few static assets, /favicon.ico and its payload (GET /api/wallboard):
// public, read-only. Exact paths, never a prefix; no other file on disk can be reached through here.
import type { WallboardService } from './service.ts';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import type { Middleware } from 'koa';
import { defineRoute } from '../../platform/http/route.ts';
import { ErrorBody } from '../../platform/http/schemas.ts';
import { packageRoot } from '../../platform/packageRoot.ts';
import { WallboardPayload, WallboardQuery } from './schemas.ts';

const PUBLIC_DIR = path.join(packageRoot, 'src', 'screens', 'wallboard', 'public');

/** No inline script or style anywhere; data only from this origin; the logo may be an http(s) URL (PUT /api/configs). */
export const WALLBOARD_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' https: http: data:; connect-src 'self'; " +
  "base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

type Asset = { file: string; type: string; html?: boolean };

/** Request path → file. Every public path outside /api this module answers is in this table. */
export const WALLBOARD_ASSETS: Record<string, Asset> = {
  '/': { file: path.join(PUBLIC_DIR, 'index.html'), type: 'text/html; charset=utf-8', html: true },
  '/wallboard': { file: path.join(PUBLIC_DIR, 'index.html'), type: 'text/html; charset=utf-8', html: true },
  '/wallboard/assets/wallboard.js': { file: path.join(PUBLIC_DIR, 'wallboard.js'), type: 'text/javascript; charset=utf-8' },
  '/wallboard/assets/wallboard.css': { file: path.join(PUBLIC_DIR, 'wallboard.css'), type: 'text/css; charset=utf-8' },
  '/favicon.ico': { file: path.join(PUBLIC_DIR, 'favicon.ico'), type: 'image/x-icon' },
};

type Loaded = { body: Buffer; gzip: Buffer; etag: string };

function load(asset: Asset): Loaded {
  const body = fs.readFileSync(asset.file);
  return { body, gzip: gzipSync(body, { level: 9 }), etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"` };
}

/**
 * Serves the table above from memory (read once, gzip once), with a strong ETag: the page itself is revalidated on
 * every load (no-cache), the assets are cached for a day and revalidated after.
 */
export function wallboardPages(): Middleware {
  const loaded = new Map<string, Loaded>();
  return async (ctx, next) => {
    const asset = WALLBOARD_ASSETS[ctx.path];
    if (!asset || (ctx.method !== 'GET' && ctx.method !== 'HEAD')) return next();
    let file = loaded.get(asset.file);
    if (!file) loaded.set(asset.file, (file = load(asset)));
    ctx.set('ETag', file.etag);
    ctx.set('Cache-Control', asset.html ? 'no-cache' : 'public, max-age=86400');
    ctx.vary('Accept-Encoding');
    if (asset.html) ctx.set('Content-Security-Policy', WALLBOARD_CSP);
    if (ctx.get('If-None-Match') === file.etag) {
      ctx.status = 304;
      return;
    }
    ctx.type = asset.type;
    if (ctx.acceptsEncodings('gzip', 'identity') === 'gzip' && file.gzip.length < file.body.length) {
      ctx.set('Content-Encoding', 'gzip');
      ctx.body = file.gzip;
    } else {
      ctx.body = file.body;
    }
  };
}

export type WallboardRouteNeeds = { wallboard: WallboardService };

export function wallboardRoutes({ wallboard }: WallboardRouteNeeds) {
  return [
    defineRoute({
      method: 'GET',
      path: '/api/wallboard',
      access: 'public',
      summary: 'What the wallboard shows, for the site or one area (no token needed)',
      description:
        'Figures, the last 7 days, every area largest first, active critical and warning alert titles with the time each became active, ' +
        'and dataState: live, failing (the last meter collection failed) or stale (no good collection within two intervals). ' +
        '`?area=` narrows it to one area; an unknown area is 404. No personal data, no alert message text.',
      tags: ['dashboard'],
      schemas: { query: WallboardQuery, response: { 200: WallboardPayload, 400: ErrorBody, 404: ErrorBody } },
      handler: ({ query }) => wallboard.payload(query.area),
    }),
  ];
}
