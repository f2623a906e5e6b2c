// Builds the OpenAPI 3.1 document from the same route definitions the router uses.
import type { TSchema } from '@sinclair/typebox';
import { ERROR_CODES } from './errors.ts';
import { successStatus, type AnyRoute } from './route.ts';

type JsonObject = Record<string, unknown>;

/** TypeBox schemas are JSON Schema already; JSON round-trip drops its symbol keys. */
function plain(schema: TSchema): JsonObject {
  return JSON.parse(JSON.stringify(schema)) as JsonObject;
}

function openApiPath(path: string): string {
  return path.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
}

function parameters(route: AnyRoute): JsonObject[] {
  const list: JsonObject[] = [];
  for (const [where, schema] of [
    ['path', route.schemas.params],
    ['query', route.schemas.query],
  ] as const) {
    if (!schema) continue;
    const object = plain(schema) as { properties?: Record<string, JsonObject>; required?: string[] };
    for (const [name, property] of Object.entries(object.properties ?? {})) {
      list.push({
        name,
        in: where,
        required: where === 'path' || (object.required ?? []).includes(name),
        description: property.description,
        schema: property,
      });
    }
  }
  return list;
}

function requestBody(route: AnyRoute): JsonObject | undefined {
  if (route.bodyType === 'multipart') {
    return {
      required: true,
      content: {
        'multipart/form-data': {
          schema: route.schemas.body
            ? plain(route.schemas.body)
            : { type: 'object', required: ['file'], properties: { file: { type: 'string', format: 'binary' } } },
        },
      },
    };
  }
  if (!route.schemas.body) return undefined;
  return { required: true, content: { 'application/json': { schema: plain(route.schemas.body) } } };
}

const ERROR_SCHEMA = {
  type: 'object',
  required: ['error', 'code'],
  properties: {
    error: { type: 'string', description: 'for people; may change between versions' },
    code: { type: 'string', enum: Object.keys(ERROR_CODES), description: 'stable, for programs; the table in the API description says what each means' },
    details: { type: 'array', items: { type: 'object', properties: { path: { type: 'string' }, message: { type: 'string' } } } },
  },
};

function responses(route: AnyRoute): JsonObject {
  const out: JsonObject = {};
  for (const [status, schema] of Object.entries(route.schemas.response)) {
    if (Number(status) === 204) {
      out[status] = { description: 'No content' };
      continue;
    }
    const isSuccess = Number(status) === successStatus(route);
    const contentType = isSuccess && route.raw ? route.raw.contentType : 'application/json';
    out[status] = { description: Number(status) < 300 ? 'Success' : 'Error', content: { [contentType]: { schema: plain(schema) } } };
  }
  const add = (status: number, description: string) => {
    out[status] ??= { description, content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } };
  };
  add(400, 'Validation error');
  if (route.access !== 'public') {
    add(401, 'Missing, invalid or expired access token');
    add(403, 'Role too low');
  }
  return out;
}

/** Every error body is { error, code, details? }; the codes come from the one catalogue in src/errors.ts. */
function errorCodeTable(): string {
  const rows = Object.entries(ERROR_CODES).map(([code, { status, description }]) => `| \`${code}\` | ${status} | ${description} |`);
  return ['Error codes (`code` in every error body):', '', '| code | status | meaning |', '|---|---|---|', ...rows].join('\n');
}

export function buildOpenApi(routes: AnyRoute[], info: { version: string; serverUrl?: string }): JsonObject {
  const paths: Record<string, JsonObject> = {};
  for (const route of routes) {
    const path = openApiPath(route.path);
    paths[path] ??= {};
    paths[path][route.method.toLowerCase()] = {
      summary: route.summary,
      description: route.description,
      tags: route.tags,
      operationId: `${route.method.toLowerCase()}${path.replace(/[{}]/g, '').replace(/[^A-Za-z0-9]+(.)?/g, (_, c: string | undefined) => (c ? c.toUpperCase() : ''))}`,
      security: route.access === 'public' ? [] : [{ bearerAuth: [] }],
      'x-access': route.access,
      parameters: parameters(route),
      requestBody: requestBody(route),
      responses: responses(route),
    };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'EMS API',
      version: info.version,
      description:
        'Energy-management and facility-monitoring appliance. Call POST /api/auth/login here and the page applies the bearer token to every later request.\n\n' +
        errorCodeTable(),
    },
    servers: [{ url: info.serverUrl ?? '/' }],
    components: {
      securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } },
      schemas: { Error: ERROR_SCHEMA },
    },
    paths,
  };
}
