// The interactive API reference at /documentation, with swagger-ui served from node_modules (the LAN is often offline).
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { gzipSync } from 'node:zlib';
import path from 'node:path';
import { createRequire } from 'node:module';
import type { Middleware } from 'koa';

const require = createRequire(import.meta.url);
const swaggerDistDir = path.dirname(require.resolve('swagger-ui-dist/package.json'));
const swaggerVersion = (require('swagger-ui-dist/package.json') as { version: string }).version;

export const DOCS_PATH = '/documentation';
export const DOCS_JSON_PATH = '/documentation/json';
const ASSETS_PATH = '/documentation/assets';

/** The page template asks for these names; swagger-ui-dist ships no minified css, so that name maps to the plain one. */
const ASSETS: Record<string, { file: string; type: string }> = {
  'swagger-ui.min.css': { file: 'swagger-ui.css', type: 'text/css; charset=utf-8' },
  'swagger-ui-bundle.js': { file: 'swagger-ui-bundle.js', type: 'application/javascript; charset=utf-8' },
  'swagger-ui-standalone-preset.js': { file: 'swagger-ui-standalone-preset.js', type: 'application/javascript; charset=utf-8' },
};

// The template pastes these in as source text, so they are strings, not closures (SPEC.md Authentication 10).
const requestInterceptor = `function (request) {
  var token = window.localStorage.getItem('ems.accessToken');
  if (token && !request.headers.Authorization) request.headers.Authorization = 'Bearer ' + token;
  return request;
}`;

const responseInterceptor = `function (response) {
  try {
    var pathname = new URL(response.url, window.location.href).pathname;
    if (response.ok && /\\/api\\/auth\\/(login|refresh|register)$/.test(pathname)) {
      var body = response.body && typeof response.body === 'object' ? response.body : JSON.parse(response.text);
      if (body.accessToken) {
        window.localStorage.setItem('ems.accessToken', body.accessToken);
        if (window.ui && window.ui.preauthorizeApiKey) window.ui.preauthorizeApiKey('bearerAuth', body.accessToken);
      }
      if (body.refreshToken) window.localStorage.setItem('ems.refreshToken', body.refreshToken);
    }
  } catch (error) { /* not a token response */ }
  return response;
}`;

// The template emits "options.modelPropertyMacro = <this>;" whenever a responseInterceptor is set: left out, that line is a
// syntax error; any function there makes swagger-ui 5's 3.1 resolver fail when an operation is expanded. "undefined" is neither.
const modelPropertyMacro = 'undefined';

export const DOCS_CSP = [
  "default-src 'self'",
  "script-src 'self' 'unsafe-inline'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "font-src 'self'",
  "frame-ancestors 'none'",
].join('; ');

export function documentationPage(): Middleware {
  // koa2-swagger-ui (handlebars, lodash) is loaded on the first page view: ~15 MiB of resident memory and ~65 ms of
  // start-up that an appliance nobody opens the reference on never needs.
  let page: Promise<Middleware> | undefined;
  const loadPage = async (): Promise<Middleware> => {
    const { koaSwagger } = await import('koa2-swagger-ui');
    return koaSwagger({
      title: 'EMS API reference',
      routePrefix: DOCS_PATH,
      swaggerCdnUrl: ASSETS_PATH,
      swaggerVersion,
      hideTopbar: true,
      swaggerOptions: {
        url: DOCS_JSON_PATH,
        persistAuthorization: true,
        displayRequestDuration: true,
        requestInterceptor,
        responseInterceptor,
        modelPropertyMacro,
      },
    });
  };
  return async (ctx, next) => {
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') return next();
    if (ctx.path.startsWith(`${ASSETS_PATH}/`)) {
      const [version, name, ...rest] = ctx.path.slice(ASSETS_PATH.length + 1).split('/');
      const asset = ASSETS[name ?? ''];
      if (version !== swaggerVersion || !asset || rest.length) return next();
      ctx.type = asset.type;
      ctx.set('Cache-Control', 'public, max-age=86400');
      ctx.body = fs.createReadStream(path.join(swaggerDistDir, asset.file));
      return;
    }
    if (ctx.path === DOCS_PATH || ctx.path === `${DOCS_PATH}/`) {
      ctx.set('Content-Security-Policy', DOCS_CSP);
      page ??= loadPage().catch((error: unknown) => {
        page = undefined;
        throw error;
      });
      return (await page)(ctx, next);
    }
    return next();
  };
}

/**
 * The document (~0.5 MB of JSON) is built once, then served with an ETag (a conditional GET answers 304 with no body),
 * `Cache-Control: no-cache` (a client may keep it but asks each time whether it changed: it changes with an upgrade)
 * and gzip-compressed to a client that accepts it (compressed once, ~10 times smaller).
 */
export function documentationJson(document: () => Record<string, unknown>): Middleware {
  let cached: { json: Buffer; gzip: Buffer; etag: string } | undefined;
  return async (ctx, next) => {
    if (ctx.path !== DOCS_JSON_PATH || (ctx.method !== 'GET' && ctx.method !== 'HEAD')) return next();
    if (!cached) {
      const json = Buffer.from(JSON.stringify(document()));
      cached = { json, gzip: gzipSync(json, { level: 9 }), etag: `"${createHash('sha256').update(json).digest('base64url').slice(0, 27)}"` };
    }
    ctx.set('ETag', cached.etag);
    ctx.set('Cache-Control', 'no-cache');
    ctx.set('Vary', 'Accept-Encoding');
    ctx.type = 'application/json';
    const match = ctx.get('If-None-Match');
    if (match && match.split(',').some((tag) => tag.trim().replace(/^W\//, '') === cached!.etag)) {
      ctx.status = 304;
      return;
    }
    if (ctx.acceptsEncodings('gzip', 'identity') === 'gzip') {
      ctx.set('Content-Encoding', 'gzip');
      ctx.body = cached.gzip;
    } else {
      ctx.body = cached.json;
    }
  };
}
