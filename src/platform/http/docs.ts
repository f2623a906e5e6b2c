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
/** Where the page sends a write whose body is still the prefilled example: answered 400, nothing written. */
export const EXAMPLE_REFUSED_PATH = '/documentation/unedited-example';
export const DOCS_JSON_PATH = '/documentation/json';
const ASSETS_PATH = '/documentation/assets';

/** The page template asks for these names; swagger-ui-dist ships no minified css, so that name maps to the plain one. */
const ASSETS: Record<string, { file: string; type: string }> = {
  'swagger-ui.min.css': { file: 'swagger-ui.css', type: 'text/css; charset=utf-8' },
  'swagger-ui-bundle.js': { file: 'swagger-ui-bundle.js', type: 'application/javascript; charset=utf-8' },
  'swagger-ui-standalone-preset.js': { file: 'swagger-ui-standalone-preset.js', type: 'application/javascript; charset=utf-8' },
};

// The one refresh in flight, shared by every call that needs it; resolves with the new access token.
const defineRefresh = `if (!window.__emsRefresh) window.__emsRefresh = function () {
  var ems = window.__ems || (window.__ems = { refreshing: null, sent: {}, examples: null });
  if (ems.refreshing) return ems.refreshing;
  var refreshToken = window.localStorage.getItem('ems.refreshToken');
  ems.refreshing = fetch('/api/auth/refresh', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ refreshToken: refreshToken }) })
    .then(function (res) {
      if (!res.ok) throw new Error('refresh refused');
      return res.json();
    })
    .then(function (pair) {
      window.localStorage.setItem('ems.accessToken', pair.accessToken);
      window.localStorage.setItem('ems.refreshToken', pair.refreshToken);
      if (window.ui && window.ui.preauthorizeApiKey) window.ui.preauthorizeApiKey('bearerAuth', pair.accessToken);
      return pair.accessToken;
    })
    .catch(function (error) {
      window.localStorage.removeItem('ems.accessToken');
      window.localStorage.removeItem('ems.refreshToken');
      throw error;
    })
    .finally(function () { ems.refreshing = null; });
  return ems.refreshing;
}`;

// The template pastes these in as source text, so they are strings, not closures (SPEC.md Authentication 10).
// Both may answer a Promise (swagger-ui waits for it). window.__ems holds the page's state: the one refresh in flight,
// the last request sent to each URL (to repeat it after a refresh) and the write examples of the document.
//
// Request: (1) an access token that expires within 30 s is refreshed first, once for every call waiting on it
// (single-flight: a refresh token is used up by its refresh, SPEC Authentication 9); (2) a write whose body is still
// the prefilled example is not sent: examples are for reading, and executed unedited they created plausible fake
// records ("Chiller 2 / Quarterly service / J. Smith"). The body must be edited first (sign-in is exempt: its example
// cannot sign anyone in).
const requestInterceptor = `function (request) {
  ${defineRefresh}
  var ems = window.__ems || (window.__ems = { refreshing: null, sent: {}, examples: null });
  var path = new URL(request.url, window.location.href).pathname;
  var method = String(request.method || 'GET').toUpperCase();
  if (method !== 'GET' && method !== 'HEAD' && typeof request.body === 'string' && !/^\\/api\\/auth\\/login$/.test(path)) {
    if (!ems.examples) {
      ems.examples = {};
      try {
        var spec = window.ui.specSelectors.specJson().toJS();
        Object.keys(spec.paths || {}).forEach(function (p) {
          Object.keys(spec.paths[p]).forEach(function (m) {
            var body = spec.paths[p][m].requestBody;
            var json = body && body.content && body.content['application/json'];
            if (json && json.example !== undefined) ems.examples[JSON.stringify(json.example)] = true;
          });
        });
      } catch (error) { /* no spec yet: nothing to compare with */ }
    }
    var sent = null;
    try { sent = JSON.stringify(JSON.parse(request.body)); } catch (error) { /* not JSON: not an example */ }
    if (sent !== null && ems.examples[sent]) {
      // Sent to the page's own refusal instead, which answers 400 saying why (a rejected promise breaks swagger-ui's view).
      request.url = new URL('${EXAMPLE_REFUSED_PATH}?to=' + encodeURIComponent(method + ' ' + path), window.location.href).href;
      return request;
    }
  }
  var authPath = /^\\/api\\/auth\\/(login|refresh)$/.test(path);
  ems.sent[method + ' ' + request.url] = { url: request.url, method: method, headers: Object.assign({}, request.headers), body: request.body };
  var apply = function () {
    var token = window.localStorage.getItem('ems.accessToken');
    if (token && !authPath) request.headers.Authorization = 'Bearer ' + token;
    return request;
  };
  var token = window.localStorage.getItem('ems.accessToken');
  if (!token || authPath || !window.localStorage.getItem('ems.refreshToken')) return apply();
  var expiresAt = 0;
  try { expiresAt = JSON.parse(atob(token.split('.')[1].replace(/-/g, '+').replace(/_/g, '/'))).exp * 1000; } catch (error) { return apply(); }
  if (expiresAt - Date.now() > 30000) return apply();
  return window.__emsRefresh().then(apply, apply);
}`;

// Response: a token answer is stored; a 401 to any other call is refreshed once (shared with every call that gets a 401
// meanwhile) and the call is repeated with the new token; if the refresh fails, the stored tokens are cleared.
const responseInterceptor = `function (response) {
  ${defineRefresh}
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
    var ems = window.__ems;
    var original = ems && ems.sent[String(response.method || '').toUpperCase() + ' ' + response.url];
    var again = ems && Object.keys(ems.sent).map(function (key) { return ems.sent[key]; }).filter(function (r) { return r.url === response.url; }).pop();
    var sent = original || again;
    if (response.status === 401 && sent && !/^\\/api\\/auth\\/(login|refresh)$/.test(pathname) && window.localStorage.getItem('ems.refreshToken')) {
      return window.__emsRefresh().then(function (token) {
        var headers = Object.assign({}, sent.headers, { Authorization: 'Bearer ' + token });
        return fetch(sent.url, { method: sent.method, headers: headers, body: sent.method === 'GET' || sent.method === 'HEAD' ? undefined : sent.body }).then(function (res) {
          return res.text().then(function (text) {
            var parsed = text;
            try { parsed = JSON.parse(text); } catch (error) { /* not JSON */ }
            var out = { ok: res.ok, url: res.url, status: res.status, statusText: res.statusText, headers: {}, text: text, data: text, body: parsed, obj: parsed };
            res.headers.forEach(function (value, key) { out.headers[key] = value; });
            return out;
          });
        });
      }, function () { return response; });
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
        // A search box over the operations (by tag, or with a word of the path).
        filter: true,
        requestInterceptor,
        responseInterceptor,
        modelPropertyMacro,
        // The schema section under the operations is not rendered: on load it walks every schema of the document.
        // (The template writes the options as JSON; koa2-swagger-ui's type has no numbers.)
        ...({ defaultModelsExpandDepth: -1 } as unknown as Record<string, string>),
      },
    });
  };
  return async (ctx, next) => {
    if (ctx.path === EXAMPLE_REFUSED_PATH) {
      ctx.status = 400;
      ctx.body = {
        error: `Not sent: the body of ${String(ctx.query.to ?? 'this call').slice(0, 200)} is still the prefilled EXAMPLE. Edit it to the record you mean, then Execute.`,
        code: 'VALIDATION',
      };
      return;
    }
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
    if (match?.split(',').some((tag) => tag.trim().replace(/^W\//, '') === cached!.etag)) {
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
