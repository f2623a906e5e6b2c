// The fleet's OpenAPI 3.1 document, built from its route table (routes.ts) like the box's is from its own: every status
// an operation can answer is declared, the refusals derived from what the app does for its access, path and body
// (app.ts). Served at /documentation (the box's swagger page) and /documentation/json.
import type { Middleware } from 'koa';
import compose from 'koa-compose';
import { documentationJson, documentationPage } from '../platform/http/docs.ts';
import { operationParameters, plain } from '../platform/http/openapi.ts';
import { version } from '../platform/packageRoot.ts';
import { FLEET_ERRORS } from './errors.ts';
import { FleetErrorSchema } from './routeSchemas.ts';
import { FLEET_ROUTES, type FleetAccess, type FleetRoute } from './routes.ts';

type JsonObject = Record<string, unknown>;

const TAGS: Record<FleetRoute['tag'], string> = {
  service: 'The service itself.',
  sites: 'What the boxes call with their site credential: enrolment, batches, leaving.',
  portfolio: "The portfolio the fleet's users read, limited to their sites: health, EUI ranking, alerts, meters, XLSX exports.",
  'site administration': 'Enrolment codes, renaming, revoking and re-admitting sites, which box is a site, and their audit trail.',
  people: 'Signing in (password, single sign-on, invitations) and the fleet users with their roles per site.',
};

const ACCESS_LINE: Record<FleetAccess, string> = {
  public: '**Public.**',
  site: "**A site's credential** (`Authorization: Bearer ems_site_…`).",
  viewer: '**A fleet user** (viewer or admin), limited to their sites: another site is 404.',
  admin: '**A fleet admin**, limited to their sites: another site is 404.',
  'fleet-admin': '**A fleet admin of every site.**',
};

const REFUSALS: Record<number, string> = {
  400: 'Refused: a parameter or the body is not valid (`details.field` names the field where one is at fault)',
  401: 'No valid credential or user token',
  403: 'The caller may not do this',
  404: 'No such site (or one outside the caller’s sites)',
  409: 'Conflict with the site’s state',
  413: 'The body is too large',
  422: 'Well formed, but a figure is out of range or names an undeclared meter',
  429: 'Busy, or too many failed sign-ins: try again after Retry-After',
  431: 'The request line and headers are over 16 KiB (Node refuses them before the app)',
  502: 'The sign-in provider could not be reached',
  503: 'The fleet database is unavailable: try again after Retry-After',
};

/** Every status the app can answer for this route: its success, the refusals its access, path and body give, its own. */
export function declaredStatuses(route: FleetRoute): number[] {
  const statuses = new Set<number>(Object.keys(route.schemas.response).map(Number));
  if (route.access !== 'public') statuses.add(401);
  if (route.access === 'admin' || route.access === 'fleet-admin') statuses.add(403);
  if (route.schemas.params) statuses.add(404);
  if (route.schemas.query) statuses.add(400);
  if (route.schemas.body) {
    statuses.add(400);
    statuses.add(413);
  }
  for (const status of route.refusals ?? []) statuses.add(status);
  statuses.add(431);
  statuses.add(503);
  return [...statuses].sort((a, b) => a - b);
}

function responses(route: FleetRoute): JsonObject {
  const out: JsonObject = {};
  for (const status of declaredStatuses(route)) {
    const schema = route.schemas.response[status];
    if (status >= 300 && status < 400) {
      out[status] = {
        description: 'A redirect (Location), with a line of text saying where',
        headers: { Location: { schema: { type: 'string' } } },
        content: { 'text/plain': { schema: { type: 'string' } } },
      };
      continue;
    }
    if (status < 300) {
      if (route.raw) out[status] = { description: 'The workbook', content: { [route.raw.contentType]: { schema: { type: 'string', format: 'binary' } } } };
      else if (schema === undefined) out[status] = { description: 'Done, no content' };
      else out[status] = { description: 'Success', content: { 'application/json': { schema: plain(schema) } } };
      continue;
    }
    if (status === 431) {
      out[status] = { description: REFUSALS[status] };
      continue;
    }
    const codes = Object.entries(FLEET_ERRORS)
      .filter(([, s]) => s === status)
      .map(([code]) => `\`${code}\``);
    out[status] = {
      description: `${REFUSALS[status] ?? 'Refused'}${codes.length ? ` (${codes.join(', ')})` : ''}`,
      content: { 'application/json': { schema: { $ref: '#/components/schemas/FleetError' } } },
    };
  }
  return out;
}

export function operationId(route: FleetRoute): string {
  const path = route.path.replace(/:([A-Za-z0-9_]+)/g, '$1').replace(/\.xlsx$/, 'Xlsx');
  return `${route.method.toLowerCase()}${path.replace(/[^A-Za-z0-9]+(.)?/g, (_, c: string | undefined) => (c ? c.toUpperCase() : ''))}`;
}

export function buildFleetOpenApi(info: { version: string } = { version }): JsonObject {
  const paths: Record<string, JsonObject> = {};
  for (const route of FLEET_ROUTES) {
    const path = route.path.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
    paths[path] ??= {};
    paths[path][route.method.toLowerCase()] = {
      summary: route.summary,
      description: `${route.summary}\n\n${ACCESS_LINE[route.access]}`,
      tags: [route.tag],
      operationId: operationId(route),
      security: route.access === 'public' ? [] : [{ bearerAuth: [] }],
      'x-access': route.access,
      parameters: operationParameters(route.schemas),
      ...(route.schemas.body ? { requestBody: { required: true, content: { 'application/json': { schema: plain(route.schemas.body) } } } } : {}),
      responses: responses(route),
    };
  }
  const codes = Object.entries(FLEET_ERRORS).map(([code, status]) => `| \`${code}\` | ${status} |`);
  return {
    openapi: '3.1.0',
    info: {
      title: 'EMS fleet API',
      version: info.version,
      description: [
        'The fleet service: boxes send their rows with their site credential; people read the portfolio and administer sites with a fleet user token (docs/fleet.md).',
        'Every status an operation can answer is listed under it. A 500 is a bug: it is never declared.',
        ['| code | status |', '|---|---|', ...codes].join('\n'),
      ].join('\n\n'),
      license: { name: 'Proprietary: the terms the appliance was supplied under', identifier: 'LicenseRef-EMS-Proprietary' },
    },
    servers: [{ url: '/' }],
    tags: Object.entries(TAGS).map(([name, description]) => ({ name, description })),
    components: {
      securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer' } },
      schemas: { FleetError: plain(FleetErrorSchema) },
    },
    paths,
  };
}

/** /documentation (the box's swagger page, its assets from node_modules) and /documentation/json, the fleet's document. */
export function fleetDocumentation(): Middleware {
  return compose([documentationPage(), documentationJson(() => buildFleetOpenApi())]);
}
