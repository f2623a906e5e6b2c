// Builds the OpenAPI 3.1 document from the same route definitions the router uses: every status an operation can
// answer is declared, most of them derived here from what the router itself does (access, params, body, middleware).
import { codeForStatus, ERROR_CODES, type ErrorCode } from '../errors.ts';
import { successStatus, type AnyRoute } from './route.ts';

type JsonObject = Record<string, unknown>;

/** Every tag an operation may carry, with what it groups; test/platform/apiReference.test.ts fails on a tag not listed here. */
export const TAGS: Readonly<Record<string, string>> = {
  system: 'Service health and the backup schedule.',
  auth: 'Sign-in, token refresh, registration and password reset by emailed code, and OAuth provider sign-in.',
  users: 'User accounts, roles, passwords, avatars and linked sign-in providers.',
  alerts: 'Alerts (raised by people or gateway alarms): lifecycle, notes, shelving, bulk actions, notification rules and their deliveries.',
  faults: 'Fault records and their statistics.',
  maintenance: 'Maintenance records, also opened from an alert or a fault.',
  reports: 'Report templates, scheduled report plans, their runs and the files the runs produce.',
  audit: 'The audit trail of every change.',
  dashboard: 'The public wallboard payload, the signed-in dashboard and its per-user settings.',
  overview: 'Overview statistics and the weekly energy chart.',
  energy: 'Energy area cards, meters, tariffs and the figures computed from the meter intervals.',
  analysis:
    'Energy analysis: period comparisons, demand charges, peak warnings, weather-normalised baselines, EnPIs with their floor areas and drivers, and anomaly checks.',
  billing:
    'Who pays for what and did it work: tenants and cost centres, meter splits, billing periods, runs and statements (PDF, XLSX), supplier bills checked against the meters, budgets and verified savings.',
  configs: 'The platform configuration and the 3D scene configuration.',
  files: 'Uploaded files: upload, metadata, download, delete.',
  models: '3D model files: upload, metadata, download, delete.',
  iot: 'The IoT gateway, proxied: point values, history, writes, alarms and the gateway token.',
  'fault detection':
    'Equipment fault detection: gateway points given an equipment and a Brick class, rules as versioned data, the faults they found ranked by money, and rules tried on history.',
};

/** TypeBox schemas are JSON Schema already; JSON round-trip drops its symbol keys. */
export function plain(schema: unknown): JsonObject {
  return JSON.parse(JSON.stringify(schema)) as JsonObject;
}

/**
 * A request body as the router reads it: unknown fields are dropped before validation (validation.ts, bodyAjv), never
 * refused, so the document does not claim `additionalProperties: false` anywhere in a body.
 */
function lenient(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(lenient);
  if (!schema || typeof schema !== 'object') return schema;
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === 'additionalProperties' && value === false) continue;
    out[key] = key === 'properties' ? Object.fromEntries(Object.entries(value as JsonObject).map(([name, item]) => [name, lenient(item)])) : lenient(value);
  }
  return out;
}

function openApiPath(path: string): string {
  return path.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
}

export function operationId(route: AnyRoute): string {
  const path = openApiPath(route.path);
  return `${route.method.toLowerCase()}${path.replace(/[{}]/g, '').replace(/[^A-Za-z0-9]+(.)?/g, (_, c: string | undefined) => (c ? c.toUpperCase() : ''))}`;
}

/**
 * An operation's path and query parameters from its TypeBox schemas, for the box's document and the fleet's
 * (src/fleet/openapi.ts). A parameter with a default is filled in by the router (useDefaults): a client may leave it out.
 */
export function operationParameters(schemas: { params?: unknown; query?: unknown }): JsonObject[] {
  const list: JsonObject[] = [];
  for (const [where, schema] of [
    ['path', schemas.params],
    ['query', schemas.query],
  ] as const) {
    if (!schema) continue;
    const object = plain(schema) as { properties?: Record<string, JsonObject>; required?: string[] };
    for (const [name, property] of Object.entries(object.properties ?? {})) {
      const required = where === 'path' || ((object.required ?? []).includes(name) && property.default === undefined);
      list.push({ name, in: where, required, description: property.description, schema: property });
    }
  }
  return list;
}

function bodyType(route: AnyRoute): 'json' | 'form' | 'multipart' | undefined {
  return route.bodyType ?? (route.schemas.body ? 'json' : undefined);
}

const LENIENT_NOTE = 'Unknown fields are dropped, not refused.';

function requestBody(route: AnyRoute): JsonObject | undefined {
  const type = bodyType(route);
  if (route.rawBody) {
    const raw: JsonObject = { schema: { type: 'string' } };
    if (route.example !== undefined) raw.example = route.example;
    return { required: true, content: { [route.rawBody.contentType]: raw } };
  }
  if (type === 'multipart') {
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
  const schema = lenient(plain(route.schemas.body)) as JsonObject;
  const json: JsonObject = { schema };
  if (route.example !== undefined) json.example = route.example;
  const content: JsonObject = { 'application/json': json };
  if (type === 'form') content['application/x-www-form-urlencoded'] = { schema };
  // A missing body is read as {} (router.ts): where that is valid (every field optional) the body is optional.
  const optional = !(Array.isArray(schema.required) && schema.required.length > 0) && schema.type === 'object';
  return { required: !optional, description: optional ? `${LENIENT_NOTE} Every field is optional: no body is read as {}.` : LENIENT_NOTE, content };
}

/** The shape of ErrorBody (src/platform/http/schemas.ts): { error, code, details? }. */
/**
 * The IoT proxy's relayed gateway refusal (src/gateway/routes.ts): the Error shape plus the gateway's own fields.
 * Published once as RelayedError and referenced, like Error (36 inline copies before).
 */
function isRelayedError(schema: JsonObject): boolean {
  const properties = Object.keys((schema.properties as JsonObject | undefined) ?? {}).sort();
  return schema.type === 'object' && properties.join(',') === 'code,details,error,gatewayStatus,success';
}

let relayedError: JsonObject | undefined;
function relayedErrorRef(schema: JsonObject): JsonObject {
  relayedError ??= schema;
  return { $ref: '#/components/schemas/RelayedError' };
}

function isErrorBody(schema: JsonObject): boolean {
  const properties = Object.keys((schema.properties as JsonObject | undefined) ?? {}).sort();
  return schema.type === 'object' && ['code,details,error', 'code,error'].includes(properties.join(','));
}

/**
 * \p{Cc} (what the server's own check uses: ajv compiles patterns with the `u` flag) is not portable: without the `u`
 * flag (Spectral, most JavaScript generators) the class means the letters p, {, C, c, } and valid names fail, and
 * Python's `re` cannot compile it. The published document spells it out as the two ranges it stands for (C0 and
 * DEL plus C1), which every regex dialect reads the same; the server keeps checking with the original.
 */
export const PORTABLE_CC = '\\u0000-\\u001f\\u007f-\\u009f';
function portablePatterns(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(portablePatterns);
  if (!value || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, item]) => [
      key,
      key === 'pattern' && typeof item === 'string' ? item.replaceAll('\\p{Cc}', PORTABLE_CC) : portablePatterns(item),
    ]),
  );
}

const ERROR_SCHEMA = {
  type: 'object',
  required: ['error', 'code'],
  properties: {
    error: { type: 'string', description: 'for people; may change between versions' },
    code: { type: 'string', enum: Object.keys(ERROR_CODES), description: 'stable, for programs; the table in the API description says what each means' },
    details: { type: 'array', items: { type: 'object', required: ['path', 'message'], properties: { path: { type: 'string' }, message: { type: 'string' } } } },
  },
};

/** An error body with an example carrying its real code (swagger-ui would otherwise show the enum's first value). */
function errorContent(code: ErrorCode, error: string): JsonObject {
  return { 'application/json': { schema: { $ref: '#/components/schemas/Error' }, example: { error, code } } };
}

/**
 * Answers the router, its middleware or Node give an operation whatever its handler does; an operation refers to
 * them by name (components.responses) when what it has makes them possible.
 */
const COMMON_RESPONSES: Record<string, JsonObject> = {
  BadRequest: {
    description: 'VALIDATION: a parameter or the body breaks its schema (details name the fields), or the body is not JSON',
    content: errorContent('VALIDATION', 'Invalid body'),
  },
  Unauthenticated: {
    description: 'UNAUTHENTICATED: no, a malformed, an invalid or an expired access token',
    content: errorContent('UNAUTHENTICATED', 'Authentication required'),
  },
  RoleTooLow: {
    description: 'FORBIDDEN: the caller’s role is below the one this operation requires',
    content: errorContent('FORBIDDEN', 'Your role does not allow this'),
  },
  NotFound: { description: 'NOT_FOUND: no record with this id (or name)', content: errorContent('NOT_FOUND', 'Not found') },
  BodyTimeout: {
    description: 'REQUEST_TIMEOUT: the body did not arrive within EMS_BODY_TIMEOUT; the connection is closed',
    content: errorContent('REQUEST_TIMEOUT', 'The request body did not arrive in time'),
  },
  PayloadTooLarge: {
    description: 'PAYLOAD_TOO_LARGE: the JSON body is over 1 MiB (declared or received)',
    content: errorContent('PAYLOAD_TOO_LARGE', 'request entity too large'),
  },
  UnsupportedMediaType: {
    description: 'UNSUPPORTED_MEDIA_TYPE: the body is not JSON (or a form, where accepted), or its Content-Encoding cannot be read',
    content: errorContent('UNSUPPORTED_MEDIA_TYPE', 'Send the body as JSON (Content-Type: application/json)'),
  },
  TooManyBodies: {
    description: 'RATE_LIMITED: this address already has 64 bodies on their way; Retry-After says when to try again',
    content: errorContent('RATE_LIMITED', 'Too many unfinished requests from this address'),
  },
  HeadersTooLarge: {
    description: 'The request line and headers exceed Node’s 16 KiB limit (a long query string counts): answered by Node, no body, connection closed',
  },
  DatabaseBusy: {
    description: 'UNAVAILABLE: the database is busy (another process holds its lock); Retry-After: 1',
    content: errorContent('UNAVAILABLE', 'The database is busy, try again'),
  },
  StorageFull: {
    description: 'STORAGE_FULL: the appliance’s disk is full',
    content: errorContent('STORAGE_FULL', 'Storage is full: free disk space on the appliance'),
  },
  NotModified: { description: 'If-None-Match named the current ETag: no body' },
  RangeNotSatisfiable: {
    description: 'RANGE_NOT_SATISFIABLE: the Range lies beyond the end (Content-Range: bytes */size)',
    content: errorContent('RANGE_NOT_SATISFIABLE', 'Range not satisfiable'),
  },
};

const ref = (name: keyof typeof COMMON_RESPONSES) => ({ $ref: `#/components/responses/${name}` });

const STATUS_TEXT: Record<number, string> = {
  200: 'Success',
  201: 'Created',
  202: 'Accepted',
  206: 'Partial content',
  400: 'Validation error',
  401: 'Not signed in or wrong credentials',
  403: 'Not allowed',
  404: 'Not found',
  409: 'Conflict with the record’s state',
  413: 'Too large',
  415: 'Unsupported type',
  416: 'Range not satisfiable',
  429: 'Too many requests',
  502: 'The upstream (gateway or provider) failed',
  503: 'Unavailable',
  504: 'The upstream did not answer in time',
};

/** The example error of a status a route declares itself (its message varies by case; the code does not). */
const STATUS_EXAMPLE_MESSAGE: Record<number, string> = {
  400: 'Invalid body',
  401: 'Invalid username or password',
  403: 'Your role does not allow this',
  404: 'Not found',
  409: 'The record’s state does not allow this',
  413: 'Payload too large',
  415: 'Unsupported media type',
  416: 'Range not satisfiable',
  429: 'Too many attempts, try again later',
  502: 'The gateway answered with an error',
  504: 'The gateway did not answer in time',
};

/**
 * A stored file's bytes in a JSON type (a .gltf model is model/gltf+json) are the uploaded JSON document, whatever it
 * holds: declared as any JSON value, not as the string the binary types are.
 */
function rawSchema(route: AnyRoute, type: string, body: JsonObject): JsonObject {
  return route.raw?.storedFile && /[/+]json(;|$)/.test(type) ? { description: 'the stored JSON document, byte for byte as uploaded' } : body;
}

/** The content types of a raw route's success answer. */
function rawTypes(route: AnyRoute): string[] {
  return [...(route.raw?.contentTypes ?? [route.raw!.contentType])];
}

function responses(route: AnyRoute): JsonObject {
  const out: JsonObject = {};
  const success = successStatus(route);
  for (const [status, schema] of Object.entries(route.schemas.response)) {
    const code = Number(status);
    if (code === 204) {
      out[status] = { description: 'No content' };
      continue;
    }
    const description = STATUS_TEXT[code] ?? (code < 300 ? 'Success' : 'Error');
    if (code === success && route.raw) {
      const body = plain(schema);
      out[status] = { description, content: Object.fromEntries(rawTypes(route).map((type) => [type, { schema: rawSchema(route, type, body) }])) };
      continue;
    }
    // An error answer's body is the one shared Error schema: referenced, so a generator makes one type of it, not one per operation.
    const body = plain(schema);
    const json: JsonObject = {
      schema: code >= 400 && isErrorBody(body) ? { $ref: '#/components/schemas/Error' } : code >= 400 && isRelayedError(body) ? relayedErrorRef(body) : body,
    };
    if (code === success && route.responseExample !== undefined) (json.schema as JsonObject).examples = [route.responseExample];
    if (code >= 400 && code in STATUS_EXAMPLE_MESSAGE) json.example = { error: STATUS_EXAMPLE_MESSAGE[code], code: codeForStatus(code) };
    out[status] = { description, content: { 'application/json': json } };
  }
  const type = bodyType(route);
  const add = (status: number, response: JsonObject) => {
    out[status] ??= response;
  };
  if (route.schemas.params || route.schemas.query || type) add(400, ref('BadRequest'));
  if (route.access !== 'public') add(401, ref('Unauthenticated'));
  if (route.access === 'operator' || route.access === 'admin') add(403, ref('RoleTooLow'));
  if (route.schemas.params) add(404, ref('NotFound'));
  if (type === 'json' || type === 'form') {
    add(408, ref('BodyTimeout'));
    add(413, ref('PayloadTooLarge'));
    add(415, ref('UnsupportedMediaType'));
    add(429, ref('TooManyBodies'));
  }
  if (route.raw?.storedFile) {
    const body = plain(route.schemas.response[success]!);
    add(206, {
      description: 'One Range: that part of the bytes, with Content-Range',
      content: Object.fromEntries(rawTypes(route).map((t) => [t, { schema: body }])),
    });
    add(304, ref('NotModified'));
    add(416, ref('RangeNotSatisfiable'));
  }
  add(431, ref('HeadersTooLarge'));
  add(503, ref('DatabaseBusy'));
  if (route.method !== 'GET') add(507, ref('StorageFull'));
  return Object.fromEntries(Object.entries(out).sort(([a], [b]) => Number(a) - Number(b)));
}

const ACCESS_LINE: Record<AnyRoute['access'], string> = {
  public: '**Public**: no access token needed.',
  viewer: '**Requires role viewer** (any signed-in user).',
  operator: '**Requires role operator** (operator or admin).',
  admin: '**Requires role admin**.',
};

/** The route's own text, then who may call it: generated from `access`, so it can never disagree with the router. */
function description(route: AnyRoute): string {
  return [route.description ?? route.summary, ACCESS_LINE[route.access]].join('\n\n');
}

/** Every error body is { error, code, details? }; the codes come from the one catalogue in src/errors.ts. */
function errorCodeTable(): string {
  const rows = Object.entries(ERROR_CODES).map(([code, { status, description }]) => `| \`${code}\` | ${status} | ${description} |`);
  return ['Error codes (`code` in every error body):', '', '| code | status | meaning |', '|---|---|---|', ...rows].join('\n');
}

const INTRO = [
  'Energy-management and facility-monitoring appliance. Call POST /api/auth/login here and the page applies the bearer token to every later request.',
  'Every status an operation can answer is listed under it with its body. Besides its own, an operation declares those the router gives it: ' +
    '400 when it takes parameters or a body, 401 when it needs a token, 403 when it needs operator or admin, 404 when its path names a record, ' +
    '408/413/415/429 when it reads a JSON body, 206/304/416 for file downloads, 431 (Node: request line and headers over 16 KiB), ' +
    '503 (database busy, Retry-After) and, for writes, 507 (disk full). A 500 is a bug: it is never declared.',
  'A 401 says why in its code: `TOKEN_EXPIRED` for an access token this service signed whose time is up (refresh it with ' +
    'POST /api/auth/refresh, then retry); `UNAUTHENTICATED` for none, a malformed or an invalid one (a refresh cannot help: sign in).',
  'Request bodies: unknown fields are dropped, not refused. Query parameters with a default may be left out.',
  '**Tokens.** An access token lasts 15 minutes by default (EMS_ACCESS_TOKEN_TTL). On a 401, call POST /api/auth/refresh with the refresh token: ' +
    'it answers a new pair and uses the old refresh token up. So a client refreshes **once**: when several calls get a 401 at the same time, ' +
    'the first starts the one refresh and the others wait for it, then all repeat their call with the new access token. A client where each ' +
    '401 refreshes by itself presents a used refresh token on every call but the first, gets 401 and signs the user out. If the one refresh fails, sign in again.',
  'Text patterns: the server also refuses the Unicode control characters (\\p{Cc}); the published patterns spell them as the ranges \\u0000-\\u001f and \\u007f-\\u009f so that every regex dialect reads them.',
].join('\n\n');

export function buildOpenApi(routes: AnyRoute[], info: { version: string; serverUrl?: string }): JsonObject {
  const paths: Record<string, JsonObject> = {};
  for (const route of routes) {
    const path = openApiPath(route.path);
    paths[path] ??= {};
    paths[path][route.method.toLowerCase()] = {
      summary: route.summary,
      description: description(route),
      tags: route.tags,
      operationId: operationId(route),
      security: route.access === 'public' ? [] : [{ bearerAuth: [] }],
      'x-access': route.access,
      parameters: operationParameters(route.schemas),
      requestBody: requestBody(route),
      responses: responses(route),
    };
  }
  // Only the shared responses some operation refers to (an unused component is a lint warning and noise to a generator).
  const used = new Set([...JSON.stringify(paths).matchAll(/#\/components\/responses\/(\w+)/g)].map((match) => match[1]));
  return {
    openapi: '3.1.0',
    info: {
      title: 'EMS API',
      version: info.version,
      description: `${INTRO}\n\n${errorCodeTable()}`,
      contact: { name: 'The administrator of this EMS appliance' },
      // package.json is private with no licence: proprietary, on the terms the appliance is supplied under (an SPDX LicenseRef).
      license: { name: 'Proprietary: the terms the appliance was supplied under', identifier: 'LicenseRef-EMS-Proprietary' },
    },
    servers: [{ url: info.serverUrl ?? '/' }],
    tags: Object.entries(TAGS).map(([name, text]) => ({ name, description: text })),
    components: {
      securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } },
      schemas: {
        Error: ERROR_SCHEMA,
        ...(relayedError && JSON.stringify(paths).includes('#/components/schemas/RelayedError') ? { RelayedError: relayedError } : {}),
      },
      responses: Object.fromEntries(Object.entries(COMMON_RESPONSES).filter(([name]) => used.has(name))),
    },
    paths: portablePatterns(paths) as Record<string, JsonObject>,
  };
}
