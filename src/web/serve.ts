// Serves the staff app built into dist/web (npm run build:web): its index.html for a browser navigation to `/` or
// to any client-side route, and its hashed files under /app-assets/ (cached for a year: a new build has new names).
// The public paths of other modules (/api, /documentation, /wallboard, /static, /metrics, /favicon.ico) are never
// answered here, so their security floor stays as it is: an unknown /api path is still 401 without a token.
// `/` with a wallboard parameter (?area=, ?rotate=, ?theme=) stays the wallboard, so a lobby screen set up with
// one keeps working; bare `/` is the app (docs/wallboard.md).
import type { ConfigStore } from '../site/index.ts';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import type { Context, Middleware } from 'koa';
import { packageRoot } from '../platform/packageRoot.ts';

export const WEB_DIST = path.join(packageRoot, 'dist', 'web');
export const ASSET_PREFIX = '/app-assets/';

/** No inline script or style (Vite emits neither); data only from this origin; no framing; forms post here only. */
export const WEB_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; connect-src 'self'; " +
  "manifest-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

/** Paths owned by other modules: never the app's, whatever the Accept header says. */
const NOT_APP = /^\/(api|documentation|wallboard|static|metrics|favicon\.ico)(\/|$)/;
const WALLBOARD_PARAMS = ['area', 'rotate', 'theme'];

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.woff2': 'font/woff2',
  '.json': 'application/json',
};

type Asset = { body: Buffer; gzip: Buffer | null; type: string; etag: string };

function etagOf(body: Buffer | string): string {
  return `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`;
}

function asset(body: Buffer, type: string): Asset {
  const gzip = gzipSync(body, { level: 9 });
  return { body, gzip: gzip.length < body.length ? gzip : null, type, etag: etagOf(body) };
}

function escapeAttribute(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** Every file of the build, read once: a few hundred kB. */
function loadBuild(dir: string): { index: string; assets: Map<string, Asset> } | null {
  const indexFile = path.join(dir, 'index.html');
  if (!fs.existsSync(indexFile)) return null;
  const assets = new Map<string, Asset>();
  const assetDir = path.join(dir, ASSET_PREFIX.slice(1, -1));
  for (const name of fs.existsSync(assetDir) ? fs.readdirSync(assetDir) : []) {
    const type = TYPES[path.extname(name)];
    if (type) assets.set(ASSET_PREFIX + name, asset(fs.readFileSync(path.join(assetDir, name)), type));
  }
  return { index: fs.readFileSync(indexFile, 'utf8'), assets };
}

function send(ctx: Context, file: Asset, cacheControl: string): void {
  ctx.set('ETag', file.etag);
  ctx.set('Cache-Control', cacheControl);
  ctx.vary('Accept-Encoding');
  if (ctx.get('If-None-Match') === file.etag) {
    ctx.status = 304;
    return;
  }
  ctx.type = file.type;
  if (file.gzip && ctx.acceptsEncodings('gzip', 'identity') === 'gzip') {
    ctx.set('Content-Encoding', 'gzip');
    ctx.body = file.gzip;
  } else {
    ctx.body = file.body;
  }
}

/** A browser navigation: GET or HEAD asking for HTML first (fetch() and API clients ask for JSON or anything). */
function isNavigation(ctx: Context): boolean {
  if (ctx.path === '/') return !WALLBOARD_PARAMS.some((name) => ctx.query[name] !== undefined);
  if (NOT_APP.test(ctx.path)) return false;
  return ctx.accepts('html', 'json') === 'html' && (ctx.get('Accept').includes('text/html') || ctx.path === '/');
}

export function staffApp({ configs }: { configs: Pick<ConfigStore, 'platform'> }, dir: string = WEB_DIST): Middleware {
  // The site's language, time zone, name and currency ride on <html>, so the first screen needs no request to know them.
  return serveApp(() => {
    const platform = configs.platform();
    return (
      `lang="${escapeAttribute(platform.locale.split('-')[0])}" data-site-locale="${escapeAttribute(platform.locale)}" ` +
      `data-site-timezone="${escapeAttribute(platform.timezone)}" data-site-name="${escapeAttribute(platform.siteName)}" ` +
      `data-site-currency="${escapeAttribute(platform.currency)}"`
    );
  }, dir);
}

/**
 * The same app served by the fleet service (src/fleet): `<html data-mode="fleet">` tells it to show the portfolio
 * screens and sign in fleet users; no site settings ride along (the fleet spans sites).
 */
export function fleetStaffApp(dir: string = WEB_DIST): Middleware {
  return serveApp(() => 'lang="en" data-mode="fleet" data-site-name="EMS fleet"', dir, NOT_BUILT);
}

const NOT_BUILT = 'The staff app is not built: run `npm run build:web` (npm start and npm run build do it).\n';

function serveApp(htmlAttributes: () => string, dir: string, notBuilt = `${NOT_BUILT.trimEnd()} The lobby wallboard is at /wallboard.\n`): Middleware {
  let build: ReturnType<typeof loadBuild> | undefined;
  const pages = new Map<string, Asset>();
  return async (ctx, next) => {
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') return next();
    const isAsset = ctx.path.startsWith(ASSET_PREFIX);
    if (!isAsset && !isNavigation(ctx)) return next();
    if (build === undefined) build = loadBuild(dir);
    if (!build) {
      ctx.status = 503;
      ctx.type = 'text/plain; charset=utf-8';
      ctx.set('Cache-Control', 'no-store');
      ctx.body = notBuilt;
      return;
    }
    if (isAsset) {
      const file = build.assets.get(ctx.path);
      if (!file) return next();
      return send(ctx, file, 'public, max-age=31536000, immutable');
    }
    const key = htmlAttributes();
    let page = pages.get(key);
    if (!page) {
      const html = build.index.replace('<html lang="en">', `<html ${key}>`);
      pages.clear();
      pages.set(key, (page = asset(Buffer.from(html), 'text/html; charset=utf-8')));
    }
    ctx.set('Content-Security-Policy', WEB_CSP);
    send(ctx, page, 'no-cache');
  };
}
