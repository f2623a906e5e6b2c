// A seeded, schema-driven fuzzer: walks every operation of the served OpenAPI document as anonymous, viewer, operator
// and admin, with valid and invalid inputs drawn from the document's own schemas, and checks every answer against it.
import { answerText } from '../helpers/answerText.ts';
import zlib from 'node:zlib';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { startFakeGithub } from '../helpers/fakeGithub.ts';
import { seedState, type SeedUsers, type State } from './state.ts';

const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (
  ajv: Ajv,
  options?: { mode?: 'full' | 'fast' },
) => Ajv;

type Json = any;
type Role = 'anonymous' | 'viewer' | 'operator' | 'admin';
const ROLES: Role[] = ['anonymous', 'viewer', 'operator', 'admin'];
/** The order of roles and of the route table's access levels: a role may call what is at or below its rank. */
const RANK: Record<string, number> = { anonymous: 0, public: 0, viewer: 1, operator: 2, admin: 3 };

/** mulberry32: small, fast, and the same sequence for the same seed on every machine. */
export class Random {
  private state: number;
  constructor(seed: number) {
    this.state = seed >>> 0;
  }
  next(): number {
    let t = (this.state = (this.state + 0x6d2b79f5) >>> 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)]!;
  }
}

type Operation = { method: string; path: string; id: string; access: string; op: Json };

export type Failure = { operation: string; role: Role; request: string; status: number; problem: string; body: string };

/** One valid-id request: an operation called by one role with seeded ids and valid input. */
export type Reach = { operation: string; access: string; role: Role; status: number };

export type RoleFigures = {
  /** Requests this role sent, fuzzed and valid. */
  requests: number;
  /** Operations this role may call (its rank or below). */
  allowed: number;
  /** Of those, the operations its valid-id requests reached: answered other than 404 at least once. */
  reached: number;
  /** Of those, the operations that answered it a 2xx/304 at least once (valid or fuzzed). */
  succeeded: number;
  /** Operations above its rank: each refused (401 anonymous, 403 signed in) to every valid-id request. */
  refused: number;
};

export type FuzzFigures = {
  seed: number;
  rounds: number;
  /** Fuzzed requests (seeded valid and hostile input, ids from the pools). */
  requests: number;
  /** Valid-id requests: every operation × role once a round, with the round's seeded records and valid input. */
  validRequests: number;
  /** Requests the seeding sent (not checked against the contract: they are the setup). */
  seedRequests: number;
  perRole: Record<Role, RoleFigures>;
  /** Per operation ("GET /api/alerts/{id}"): each role's statuses to its valid-id requests, in round order. */
  reach: Record<string, { access: string; statuses: Record<Role, number[]> }>;
  /** The service's route table as "METHOD /openapi/{path}" (what the coverage test holds the reach against). */
  routeTable: string[];
  /** "METHOD /path role" for each valid-id request that reached its operation. */
  reachedBy: string[];
  /** Operations no allowed role reached with a valid-id request (the coverage test wants this empty). */
  unreached: string[];
  /** Seeding steps that failed, by round (a fuzzed earlier round can change what a later seed needs). */
  seedProblems: string[];
  /** Wall time of the seeding, the valid passes and the fuzzed requests, ms. */
  phaseMs: { seed: number; valid: number; fuzz: number };
  /** The slowest valid-id requests ("POST /api/system/backups/drill admin 1234 ms"), slowest first. */
  slowest: string[];
  operations: number;
  /** Operations that answered at least one 2xx (or 304) in the run. */
  operationsWithSuccess: number;
  /** The others: only errors seen (often right for the run's data, e.g. no OAuth provider is configured). */
  neverSucceeded: string[];
  statuses: Record<string, number>;
  /** Known 5xx cases another branch fixes (the list in KNOWN below), counted, not failed. */
  tolerated: Record<string, number>;
  failures: Failure[];
  durationMs: number;
};

/**
 * Known cases from issue #23 that the `harden` branch fixes. Each is tolerated only in exactly the shape named here;
 * the coordinator deletes an entry once its fix is merged (see docs/api-reference.md and notes/apidoc.md).
 */
const KNOWN: { name: string; matches(request: SentRequest, status: number, body: Json): boolean }[] = [];

/** The note of a request sent with an empty body: a 2xx to it is wrong where the document says the body is required. */
const EMPTY_BODY = 'empty body';

type SentRequest = { method: string; url: string; headers: Record<string, string>; body?: string | Buffer; note: string };

// ---------------------------------------------------------------- values from schemas

const STRING_CANDIDATES = [
  '00:00',
  '08:30',
  '17:45',
  '23:59',
  '24:00',
  '2026-05',
  '2025-12',
  '2026-05-01',
  '30 3 * * *',
  '*/5 * * * *',
  'abc',
  'meter.main.kwh',
  'temp.outdoor',
  'EUR',
  'USD',
  '123456',
  '000000',
  '+1 (555) 010-0199',
  'http://127.0.0.1:9/x.png',
  '/static/logo.png',
  'a'.repeat(64).replace(/a/g, 'f'),
  'github',
  'oidc',
  'report.pdf',
  'x',
  'Main hall',
  'ok',
  'Europe/Berlin',
  'UTC',
  'en',
  'de-DE',
];

function deref(doc: Json, schema: Json): Json {
  let current = schema;
  for (let guard = 0; current && typeof current === 'object' && typeof current.$ref === 'string' && guard < 10; guard += 1) {
    current = (current.$ref as string)
      .slice(2)
      .split('/')
      .reduce((node: Json, key: string) => node?.[key], doc);
  }
  return current;
}

function randomIso(random: Random): string {
  const ms = Date.UTC(2020, 0, 1) + Math.floor(random.next() * 10 * 365 * 86400_000);
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, random.chance(0.5) ? 'Z' : '.000Z');
}

function randomText(random: Random, min: number, max: number): string {
  const alphabet = random.chance(0.8) ? 'abcdefghijklmnopqrstuvwxyz0123456789 ._-' : 'äöüßé€漢字🙂<>"\'&%;\\/\u200e';
  const length = random.int(min, Math.max(min, Math.min(max, min + 16)));
  let text = '';
  for (let i = 0; i < length; i += 1) text += random.pick([...alphabet]);
  return text;
}

function stringFor(random: Random, schema: Json): string {
  const min = schema.minLength ?? 0;
  const max = schema.maxLength ?? 40;
  switch (schema.format) {
    case 'date-time':
      return randomIso(random);
    case 'date':
      return randomIso(random).slice(0, 10);
    case 'date-time-or-date':
      return random.chance(0.5) ? randomIso(random) : randomIso(random).slice(0, 10);
    case 'email':
      return `fuzz${random.int(0, 1e6)}@example.test`;
  }
  if (schema.pattern) {
    const pattern = new RegExp(schema.pattern, 'u');
    const fits = [...(schema.examples ?? []), ...STRING_CANDIDATES].filter(
      (text) => typeof text === 'string' && pattern.test(text) && text.length >= min && text.length <= max,
    );
    if (fits.length > 0) return random.pick(fits);
    for (let attempt = 0; attempt < 20; attempt += 1) {
      const text = randomText(random, Math.max(min, 1), max).trim() || 'x';
      if (pattern.test(text)) return text;
    }
  }
  let text = randomText(random, min, max);
  if (min > 0 && text.trim() === '') text = 'x'.repeat(min);
  return text;
}

/** A value the schema accepts (as far as this small generator can tell; the server's answer is checked either way). */
export function validValue(doc: Json, random: Random, input: Json, depth = 0): unknown {
  const schema = deref(doc, input) ?? {};
  if ('const' in schema) return schema.const;
  if (schema.enum) return random.pick(schema.enum);
  const branches = schema.anyOf ?? schema.oneOf;
  if (branches) return validValue(doc, random, random.pick(branches), depth + 1);
  if (schema.allOf) return validValue(doc, random, schema.allOf[0], depth + 1);
  if (schema.examples?.length && random.chance(0.3)) return random.pick(schema.examples);
  if (schema.default !== undefined && random.chance(0.2)) return schema.default;
  const type = Array.isArray(schema.type) ? random.pick(schema.type) : schema.type;
  switch (type) {
    case 'null':
      return null;
    case 'boolean':
      return random.chance(0.5);
    case 'integer':
    case 'number': {
      const lo = schema.minimum ?? (schema.exclusiveMinimum !== undefined ? schema.exclusiveMinimum + 1 : random.chance(0.2) ? -10 : 0);
      const hi = schema.maximum ?? (schema.exclusiveMaximum !== undefined ? schema.exclusiveMaximum - 1 : lo + 1000);
      const top = Math.min(hi, lo + (random.chance(0.7) ? 20 : 100_000));
      const value = random.chance(0.1) ? random.pick([lo, hi]) : random.int(Math.ceil(lo), Math.floor(top));
      return type === 'number' && random.chance(0.5) && value < hi ? value + Math.round(random.next() * 100) / 100 : value;
    }
    case 'string':
      return stringFor(random, schema);
    case 'array': {
      const min = schema.minItems ?? 0;
      const count = depth > 4 ? min : random.int(min, Math.min(schema.maxItems ?? 3, min + 3));
      const items: unknown[] = [];
      for (let i = 0; i < count * 3 && items.length < count; i += 1) {
        const item = validValue(doc, random, schema.items ?? {}, depth + 1);
        if (schema.uniqueItems && items.some((other) => JSON.stringify(other) === JSON.stringify(item))) continue;
        items.push(item);
      }
      return items;
    }
    case 'object':
    default: {
      if (type === undefined && !schema.properties) return random.pick(['x', 1, true, null]);
      const object: Record<string, unknown> = {};
      const required = new Set<string>(schema.required ?? []);
      for (const [name, property] of Object.entries<Json>(schema.properties ?? {})) {
        if (required.has(name) || (depth < 4 && random.chance(0.5))) object[name] = validValue(doc, random, property, depth + 1);
      }
      if (schema.patternProperties && depth < 4) {
        for (const property of Object.values<Json>(schema.patternProperties)) {
          for (let i = random.int(0, 2); i > 0; i -= 1) object[randomText(random, 1, 12) || 'k'] = validValue(doc, random, property, depth + 1);
        }
      }
      return object;
    }
  }
}

const HOSTILE_VALUES: unknown[] = [
  null,
  true,
  -1,
  0,
  1.5,
  1e308,
  -1e308,
  '',
  ' ',
  'x'.repeat(5000),
  '9'.repeat(401),
  '-9'.repeat(30),
  [],
  {},
  [null],
  { a: 1 },
  '2026-02-30T08:00:00Z',
  '2026-01-31T24:00:00Z',
  '2026-13-01',
  '0000-00-00',
  '+275760-09-13T00:00:00Z',
  '1e3',
  '0x10',
  'Infinity',
  'NaN',
  '\u0000',
  '../../etc/passwd',
  '%00',
  '<script>alert(1)</script>',
  '\u202eevil',
  '🙂'.repeat(300),
  'null',
  'undefined',
  '__proto__',
];

/** A value that breaks the schema, or at least probes its edges. */
export function hostileValue(doc: Json, random: Random, input: Json): unknown {
  const schema = deref(doc, input) ?? {};
  if (random.chance(0.6)) return random.pick(HOSTILE_VALUES);
  if (schema.type === 'integer' || schema.type === 'number')
    return random.pick([(schema.maximum ?? 1e9) + 1, (schema.minimum ?? -1e9) - 1, 2 ** 53, -(2 ** 53), 1e21]);
  if (schema.type === 'string') return schema.maxLength !== undefined ? 'y'.repeat(schema.maxLength + 1) : random.pick(['\u0000', 'x'.repeat(100_000)]);
  if (schema.type === 'array') return Array.from({ length: (schema.maxItems ?? 50) + 1 }, () => validValue(doc, random, schema.items ?? {}));
  return random.pick(HOSTILE_VALUES);
}

function mutateObject(doc: Json, random: Random, schema: Json, value: unknown): unknown {
  const resolved = deref(doc, schema) ?? {};
  if (!value || typeof value !== 'object' || Array.isArray(value)) return hostileValue(doc, random, schema);
  const copy: Record<string, unknown> = { ...(value as Record<string, unknown>) };
  const names = Object.keys(resolved.properties ?? {});
  const choice = random.int(0, 3);
  if (choice === 0 && resolved.required?.length) delete copy[random.pick(resolved.required as string[])];
  else if (choice === 1 && names.length) {
    const name = random.pick(names);
    copy[name] = hostileValue(doc, random, resolved.properties[name]);
  } else if (choice === 2) copy[random.pick(['unknownField', '__proto__', 'constructor', 'id', 'createdAt'])] = random.pick(HOSTILE_VALUES);
  else return hostileValue(doc, random, schema);
  return copy;
}

// ---------------------------------------------------------------- the run

type Options = {
  seed: number;
  rounds: number;
  /** Stop after this many fuzzed requests (the round in progress ends early). */
  requests?: number;
  log?: (line: string) => void;
};

/**
 * Writes that would break the run's own callers are kept away from them: a path `{id}` under /api/users never names
 * one of the four fuzz users (deleting, demoting or renaming them would turn every later request into 401/403), it names
 * a sacrificial user created for the purpose or a random id instead. Nothing else is excluded: the HTTP API has no
 * secret rotation or restore (those are emsctl's), logout only ends the caller's refresh token, and every other write
 * only changes records the run itself may change again.
 */
export async function runFuzz(options: Options): Promise<FuzzFigures> {
  const started = Date.now();
  const random = new Random(options.seed);
  // A configured sign-in provider (a GitHub-shaped one on loopback), so the provider routes reach their handlers.
  const github = await startFakeGithub();
  const server = await startTestServer(github.env);
  try {
    return await fuzzServer(server, random, options, started);
  } finally {
    await server.close();
    await github.close();
  }
}

async function fuzzServer(server: TestServer, random: Random, options: Options, started: number): Promise<FuzzFigures> {
  const doc = (await server.request('GET', '/documentation/json')).body as Json;
  const ajv = new Ajv({ strict: false, allErrors: false, validateFormats: true });
  addFormats(ajv, { mode: 'fast' });
  ajv.addFormat('date-time-or-date', { type: 'string', validate: () => true });
  ajv.addSchema({ $id: 'doc', components: doc.components }, 'doc');
  const validators = new Map<Json, ValidateFunction>();
  const validatorFor = (schema: Json): ValidateFunction => {
    let validate = validators.get(schema);
    if (!validate) {
      const rewritten = JSON.parse(JSON.stringify(schema).replace(/"\$ref":"#\//g, '"$ref":"doc#/'));
      validate = ajv.compile(rewritten);
      validators.set(schema, validate);
    }
    return validate;
  };

  const tokens: Record<Role, string | undefined> = { anonymous: undefined, viewer: undefined, operator: undefined, admin: undefined };
  const protectedIds = new Set<number>();
  const seedUsers = {} as SeedUsers;
  for (const role of ['viewer', 'operator', 'admin'] as const) {
    const made = await server.createUser({ role });
    tokens[role] = made.accessToken;
    protectedIds.add(made.user.id);
    seedUsers[role] = { id: made.user.id, token: made.accessToken };
  }
  const sacrificial: number[] = [];
  const makeSacrificial = async () => {
    const id = (await server.createUser({ role: random.pick(['viewer', 'operator', 'admin'] as const) })).user.id;
    sacrificial.push(id);
    return id;
  };
  for (let i = 0; i < 6; i += 1) await makeSacrificial();

  const operations: Operation[] = [];
  for (const [path, methods] of Object.entries<Json>(doc.paths)) {
    for (const [method, op] of Object.entries<Json>(methods))
      operations.push({ method: method.toUpperCase(), path, id: op.operationId, access: op['x-access'], op });
  }
  // Creates first (they fill the id pools), then changes and reads, deletes last in each round.
  const rank = (o: Operation) => (o.method === 'POST' && !o.path.includes('{') ? 0 : o.method === 'DELETE' ? 3 : o.method === 'GET' ? 2 : 1);
  operations.sort((a, b) => rank(a) - rank(b));

  /** Ids seen in answers, by the collection path they belong to ("/api/alerts"). */
  const ids = new Map<string, number[]>();
  const names: string[] = [];
  const remember = (path: string, body: Json) => {
    const base = path.split('/{')[0]!;
    const record = (item: Json, where: string) => {
      if (item && typeof item === 'object' && Number.isInteger(item.id)) {
        const list = ids.get(where) ?? [];
        if (!list.includes(item.id)) list.push(item.id);
        if (list.length > 50) list.shift();
        ids.set(where, list);
      }
    };
    record(body, base);
    if (Array.isArray(body?.items)) for (const item of body.items.slice(0, 5)) record(item, base);
    if (Array.isArray(body?.files)) for (const file of body.files) if (typeof file?.name === 'string') names.push(file.name);
  };

  const perRole = Object.fromEntries(
    ROLES.map((role) => [
      role,
      {
        requests: 0,
        allowed: operations.filter((operation) => RANK[operation.access]! <= RANK[role]!).length,
        reached: 0,
        succeeded: 0,
        refused: 0,
      },
    ]),
  ) as Record<Role, RoleFigures>;
  const figures: FuzzFigures = {
    seed: options.seed,
    rounds: options.rounds,
    requests: 0,
    validRequests: 0,
    seedRequests: 0,
    perRole,
    reach: Object.fromEntries(
      operations.map((operation) => [
        `${operation.method} ${operation.path}`,
        { access: operation.access, statuses: { anonymous: [], viewer: [], operator: [], admin: [] } },
      ]),
    ),
    unreached: [],
    reachedBy: [],
    routeTable: server.service.routes.map((route) => `${route.method} ${route.path.replace(/:([A-Za-z0-9_]+)/g, '{$1}')}`),
    seedProblems: [],
    phaseMs: { seed: 0, valid: 0, fuzz: 0 },
    slowest: [],
    operations: operations.length,
    operationsWithSuccess: 0,
    statuses: {},
    tolerated: {},
    failures: [],
    durationMs: 0,
    neverSucceeded: [],
  };
  const succeeded = new Set<string>();
  /** "operationId role" for each 2xx/304 a role got. */
  const succeededBy = new Set<string>();

  const pathValue = (operation: Operation, name: string, schema: Json, hostile: boolean): string => {
    // An empty inner segment (/api/auth/oauth//authorize): the operation's own answer or a 404, never an undeclared
    // status. (Empty at the end, /api/users/ is the collection's path: another operation.)
    if (hostile && !operation.path.endsWith(`{${name}}`) && random.chance(0.05)) return '';
    if (hostile && random.chance(0.5)) {
      // '', '.' and '..' would name another path (or be resolved away by the URL), not probe this one.
      const text = encodeURIComponent(String(hostileValue(doc, random, schema)));
      return ['', '.', '..'].includes(text) ? '%2E%2E%2F' : text;
    }
    if (name === 'id' || name.endsWith('Id')) {
      const prefix = operation.path.split(`/{${name}}`)[0]!;
      const isUserWrite = prefix === '/api/users' && operation.method !== 'GET';
      const pool = isUserWrite ? sacrificial : (ids.get(prefix) ?? []);
      if (pool.length > 0 && random.chance(0.8)) return String(random.pick(pool));
      let id = random.int(1, 40);
      while (isUserWrite && protectedIds.has(id)) id = random.int(1, 40);
      return String(id);
    }
    if (name === 'name' && names.length > 0 && random.chance(0.7)) return encodeURIComponent(random.pick(names));
    return encodeURIComponent(String(validValue(doc, random, schema)));
  };

  const buildRequest = (operation: Operation, role: Role): SentRequest => {
    const hostile = random.chance(0.4);
    const notes: string[] = [];
    let path = operation.path;
    const query = new URLSearchParams();
    for (const parameter of operation.op.parameters ?? []) {
      if (parameter.in === 'path') {
        path = path.replace(`{${parameter.name}}`, pathValue(operation, parameter.name, parameter.schema, hostile && random.chance(0.3)));
        continue;
      }
      if (!parameter.required && random.chance(0.5)) continue;
      if (hostile && random.chance(0.3)) {
        query.append(parameter.name, String(hostileValue(doc, random, parameter.schema)));
        notes.push(`hostile query ${parameter.name}`);
        continue;
      }
      const value = validValue(doc, random, parameter.schema);
      for (const item of Array.isArray(value) ? value : [value]) query.append(parameter.name, typeof item === 'object' ? JSON.stringify(item) : String(item));
    }
    if (hostile && random.chance(0.05)) query.append('pad', 'q'.repeat(17_000));
    const headers: Record<string, string> = {};
    const token = tokens[role];
    if (token)
      headers.authorization =
        hostile && random.chance(0.05) ? random.pick([`bearer ${token}`, `Bearer ${token}x`, 'Bearer', `Basic ${token}`]) : `Bearer ${token}`;
    let body: string | Buffer | undefined;
    const content = operation.op.requestBody?.content ?? {};
    const json = content['application/json'];
    if (json) {
      const example = json.example;
      let value = example !== undefined && random.chance(0.5) ? structuredClone(example) : validValue(doc, random, json.schema);
      if (hostile && random.chance(0.6)) {
        value = mutateObject(doc, random, json.schema, value);
        notes.push('hostile body');
      }
      body = JSON.stringify(value);
      headers['content-type'] = 'application/json';
      if (hostile && random.chance(0.25)) {
        const kind = random.int(0, 5);
        if (kind === 0)
          (headers['content-type'] = random.pick(['text/plain', 'application/xml', 'multipart/form-data; boundary=x'])), notes.push('wrong content-type');
        else if (kind === 1) (body = body.slice(0, Math.max(1, body.length - 2))), notes.push('truncated JSON');
        else if (kind === 2) (body = `{"pad":"${'p'.repeat(1024 * 1024)}"}`), notes.push('over 1 MiB');
        else if (kind === 3) (body = random.pick(['[]', '"text"', '42', 'null', '{"__proto__":{"x":1}}'])), notes.push('not an object');
        else if (kind === 4) {
          // A real gzip body, or a plain one labelled as compressed.
          const encoding = random.pick(['gzip', 'deflate', 'br']);
          if (random.chance(0.5) && encoding === 'gzip') body = zlib.gzipSync(body);
          headers['content-encoding'] = encoding;
          notes.push(`content-encoding ${encoding}`);
        } else (body = ''), notes.push(EMPTY_BODY);
      }
    } else if (content['multipart/form-data']) {
      const boundary = `fuzz${random.int(0, 1e9)}`;
      const fileName = random.pick(['a.png', 'b.glb', 'c.txt', 'd.html', '../e.obj', 'f']);
      const bytes = random.chance(0.5) ? Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex') : Buffer.from(randomText(random, 0, 200));
      body = Buffer.concat([
        Buffer.from(
          `--${boundary}\r\nContent-Disposition: form-data; name="${hostile ? random.pick(['file', 'other', '']) : 'file'}"; filename="${fileName}"\r\nContent-Type: ${random.pick(['image/png', 'application/octet-stream', 'text/html'])}\r\n\r\n`,
        ),
        bytes,
        Buffer.from(hostile && random.chance(0.3) ? '' : `\r\n--${boundary}--\r\n`),
      ]);
      headers['content-type'] = hostile && random.chance(0.2) ? 'application/json' : `multipart/form-data; boundary=${boundary}`;
    }
    if (operation.op.responses['206'] && random.chance(0.3))
      headers.range = random.pick(['bytes=0-3', 'bytes=-2', 'bytes=999999-', 'bytes=0-1,4-5', 'bytes=x']);
    const search = query.toString();
    return { method: operation.method, url: `${server.url}${path}${search ? `?${search}` : ''}`, headers, body, note: notes.join(', ') };
  };

  const check = (operation: Operation, role: Role, request: SentRequest, status: number, contentType: string, text: string, valid = false) => {
    const fail = (problem: string) =>
      figures.failures.push({
        operation: `${operation.method} ${operation.path}`,
        role,
        request: `${request.method} ${request.url.slice(server.url.length, server.url.length + 300)} ${request.note}`.trim(),
        status,
        problem,
        body: text.slice(0, 300),
      });
    let body: Json;
    try {
      body = contentType.includes('json') && text ? JSON.parse(text) : undefined;
    } catch {
      return fail('a JSON content type with a body that is not JSON');
    }
    // Each role is refused what is above its rank: never a success, and to a valid request exactly 401 (no token) or
    // 403 (a signed-in role below the operation's). A role at or above the rank with its valid token is never told 401.
    if (RANK[role]! < RANK[operation.access]!) {
      if (status < 400) return fail(`${role} was allowed an operation for ${operation.access}`);
      const expected = role === 'anonymous' ? 401 : 403;
      if (valid && status !== expected) return fail(`${role} was answered ${status} instead of the refusal ${expected}`);
    } else if (valid && RANK[operation.access]! > 0 && status === 401) return fail(`${role} with a valid token was answered 401`);
    const known = KNOWN.find((entry) => entry.matches(request, status, body));
    if (known) {
      figures.tolerated[known.name] = (figures.tolerated[known.name] ?? 0) + 1;
      return;
    }
    // A 5xx passes only where the operation itself declares it (health's 503, a gateway's 502/504), never the shared
    // "database busy" or "disk full" answers a single fuzz process cannot cause.
    const own = operation.op.responses[String(status)];
    if (status >= 500 && (!own || own.$ref)) return fail('5xx');
    const declared = deref(doc, operation.op.responses[String(status)]);
    if (!declared) return fail('status not declared');
    if (!declared.content) {
      if (text.length > 0) return fail('a body where none is declared');
      if (status < 400) succeeded.add(operation.id), succeededBy.add(`${operation.id} ${role}`);
      return;
    }
    const type = contentType.split(';')[0]!.trim();
    const entry = Object.entries<Json>(declared.content).find(([declaredType]) => declaredType.split(';')[0]!.trim() === type);
    if (!entry) return fail(`content type ${contentType || '(none)'} not declared for ${status}`);
    if (type === 'application/json' || /[/+]json$/.test(type)) {
      const validate = validatorFor(entry[1].schema);
      if (!validate(body)) fail(`body breaks its schema: ${ajv.errorsText(validate.errors)}`);
    }
    if (status < 300 && operation.op.requestBody?.required && request.note.split(', ').includes(EMPTY_BODY))
      fail('a required request body was missing and the write was accepted');
    if (status < 300 || status === 304) {
      succeeded.add(operation.id);
      succeededBy.add(`${operation.id} ${role}`);
      if (type === 'application/json') remember(operation.path, body);
    }
  };

  /** One request, its answer checked; false when it got no answer at all. */
  const send = async (operation: Operation, role: Role, request: SentRequest, valid: boolean): Promise<number | undefined> => {
    let status: number;
    let contentType = '';
    let text = '';
    try {
      const response = await fetch(request.url, { method: request.method, headers: request.headers, body: request.body as RequestInit['body'] });
      status = response.status;
      contentType = response.headers.get('content-type') ?? '';
      // An event stream never ends by itself: its first chunk (the stream's opening events) is what is checked.
      text = await answerText(response);
    } catch (error) {
      figures.failures.push({
        operation: `${operation.method} ${operation.path}`,
        role,
        request: request.note,
        status: 0,
        problem: `no answer: ${(error as Error).message}`,
        body: '',
      });
      return undefined;
    }
    figures.perRole[role].requests += 1;
    figures.statuses[status] = (figures.statuses[status] ?? 0) + 1;
    check(operation, role, request, status, contentType, text, valid);
    return status;
  };

  /** A request with the round's seeded ids and valid input only: what the operation's own handler answers. */
  const buildValidRequest = (operation: Operation, role: Role, state: State): SentRequest => {
    let path = operation.path;
    const query = new URLSearchParams();
    for (const parameter of operation.op.parameters ?? []) {
      if (parameter.in === 'path') {
        const value =
          state.pathValue(operation.method, operation.path, parameter.name, role) ?? encodeURIComponent(String(validValue(doc, random, parameter.schema)));
        path = path.replace(`{${parameter.name}}`, value);
      } else if (parameter.in === 'query' && (parameter.required || state.queryValue(parameter.name) !== undefined)) {
        const value = state.queryValue(parameter.name) ?? validValue(doc, random, parameter.schema);
        for (const item of Array.isArray(value) ? value : [value]) query.append(parameter.name, typeof item === 'object' ? JSON.stringify(item) : String(item));
      }
    }
    const headers: Record<string, string> = {};
    if (tokens[role]) headers.authorization = `Bearer ${tokens[role]}`;
    let body: string | Buffer | undefined;
    const content = operation.op.requestBody?.content ?? {};
    if (content['application/json']) {
      const json = content['application/json'];
      const value = json.example !== undefined ? structuredClone(json.example) : validValue(doc, random, json.schema);
      body = JSON.stringify(state.fixBody(operation.path, value));
      headers['content-type'] = 'application/json';
    } else if (content['multipart/form-data']) {
      const upload = state.upload(operation.path);
      if (upload) (body = upload.body), (headers['content-type'] = upload.contentType);
    } else {
      const [type, raw] = Object.entries<Json>(content)[0] ?? [];
      if (type) (body = typeof raw.example === 'string' ? raw.example : ''), (headers['content-type'] = type);
    }
    const search = query.toString();
    return { method: operation.method, url: `${server.url}${path}${search ? `?${search}` : ''}`, headers, body, note: 'valid ids' };
  };

  // The valid pass runs its deletes after everything else of the round, so they remove the seeded records last.
  const validOrder = [...operations].sort((a, b) => Number(a.method === 'DELETE') - Number(b.method === 'DELETE'));
  const reachedBy = new Set<string>();
  const timings: { name: string; ms: number }[] = [];
  const carry = {};

  rounds: for (let round = 0; round < options.rounds; round += 1) {
    let state: State;
    let phase = Date.now();
    const lap = (name: keyof FuzzFigures['phaseMs']) => {
      figures.phaseMs[name] += Date.now() - phase;
      phase = Date.now();
    };
    try {
      state = await seedState(server, seedUsers, round, makeSacrificial, carry);
    } catch (error) {
      figures.seedProblems.push(`round ${round + 1}: seeding threw ${(error as Error).stack ?? error}`);
      break;
    }
    lap('seed');
    figures.seedRequests += state.requests;
    figures.seedProblems.push(...state.problems.map((problem) => `round ${round + 1}: ${problem}`));
    // The fuzzed requests draw from the seeded records as well as from what earlier answers named.
    for (const [collection, id] of state.ids) {
      if (typeof id !== 'number') continue;
      const pool = ids.get(collection) ?? [];
      if (!pool.includes(id)) pool.push(id);
      ids.set(collection, pool);
    }
    for (const operation of validOrder) {
      const key = `${operation.method} ${operation.path}`;
      let deletedBy: Role | undefined;
      for (const role of ROLES) {
        const sentAt = Date.now();
        const status = await send(operation, role, buildValidRequest(operation, role, state), true);
        timings.push({ name: `${key} ${role}`, ms: Date.now() - sentAt });
        if (status === undefined) continue;
        figures.validRequests += 1;
        figures.reach[key]!.statuses[role].push(status);
        // A 404 to a delete after a lower role's delete of the same record succeeded is the record being gone: the
        // handler looked it up (the router's refusals are 401/403), so it counts as reached.
        if (status !== 404 || (operation.method === 'DELETE' && deletedBy !== undefined)) reachedBy.add(`${key} ${role}`);
        if (operation.method === 'DELETE' && status < 300) deletedBy = role;
      }
    }
    lap('valid');
    for (const operation of operations) {
      for (const role of ROLES) {
        if (options.requests !== undefined && figures.requests >= options.requests) break rounds;
        const request = buildRequest(operation, role);
        if ((await send(operation, role, request, false)) !== undefined) figures.requests += 1;
      }
    }
    lap('fuzz');
    options.log?.(
      `round ${round + 1}/${options.rounds}: ${figures.requests} fuzzed + ${figures.validRequests} valid-id requests, ${figures.failures.length} failures`,
    );
  }
  for (const role of ROLES) {
    const mine = operations.filter((operation) => RANK[operation.access]! <= RANK[role]!);
    figures.perRole[role].reached = mine.filter((operation) => reachedBy.has(`${operation.method} ${operation.path} ${role}`)).length;
    figures.perRole[role].succeeded = mine.filter((operation) => succeededBy.has(`${operation.id} ${role}`)).length;
    figures.perRole[role].refused = operations.filter((operation) => {
      const statuses = figures.reach[`${operation.method} ${operation.path}`]!.statuses[role];
      return RANK[operation.access]! > RANK[role]! && statuses.length > 0 && statuses.every((status) => status === (role === 'anonymous' ? 401 : 403));
    }).length;
  }
  figures.reachedBy = [...reachedBy];
  figures.slowest = timings
    .sort((a, b) => b.ms - a.ms)
    .slice(0, 8)
    .map((timing) => `${timing.name} ${timing.ms} ms`);
  figures.unreached = operations
    .filter((operation) => !ROLES.some((role) => RANK[role]! >= RANK[operation.access]! && reachedBy.has(`${operation.method} ${operation.path} ${role}`)))
    .map((operation) => `${operation.method} ${operation.path}`);
  figures.operationsWithSuccess = succeeded.size;
  figures.neverSucceeded = operations.filter((operation) => !succeeded.has(operation.id)).map((operation) => `${operation.method} ${operation.path}`);
  figures.durationMs = Date.now() - started;
  return figures;
}

/** The reach as Markdown tables: one row per role, and one per operation with each role's valid-id statuses. */
export function reachTables(figures: FuzzFigures): { roles: string; areas: string; operations: string } {
  const roles = [
    '| role | requests | operations allowed | reached (valid ids, not 404) | answered 2xx | refused (401/403 every time) |',
    '|---|---|---|---|---|---|',
    ...ROLES.map((role) => {
      const r = figures.perRole[role];
      return `| ${role} | ${r.requests} | ${r.allowed} | ${r.reached} | ${r.succeeded} | ${r.refused} of ${figures.operations - r.allowed} |`;
    }),
  ].join('\n');
  const summarise = (statuses: number[]) => {
    const counts = new Map<number, number>();
    for (const status of statuses) counts.set(status, (counts.get(status) ?? 0) + 1);
    return [...counts].map(([status, count]) => (count > 1 ? `${status}×${count}` : String(status))).join(' ') || '—';
  };
  const operations = [
    `| operation | access | ${ROLES.join(' | ')} |`,
    `|---|---|${ROLES.map(() => '---').join('|')}|`,
    ...Object.entries(figures.reach).map(
      ([operation, { access, statuses }]) => `| ${operation} | ${access} | ${ROLES.map((role) => summarise(statuses[role])).join(' | ')} |`,
    ),
  ].join('\n');
  // By area (/api/<area>/…): per role, operations reached of those it may call, and how many answered it a 2xx.
  const areas = new Map<string, { count: number; roles: Record<Role, { allowed: number; reached: number; ok: number }> }>();
  for (const [operation, { access, statuses }] of Object.entries(figures.reach)) {
    const area = operation.split(' ')[1]!.split('/')[2] ?? '';
    const entry = areas.get(area) ?? {
      count: 0,
      roles: Object.fromEntries(ROLES.map((role) => [role, { allowed: 0, reached: 0, ok: 0 }])) as Record<
        Role,
        { allowed: number; reached: number; ok: number }
      >,
    };
    entry.count += 1;
    for (const role of ROLES) {
      if (RANK[role]! < RANK[access]!) continue;
      const cell = entry.roles[role];
      cell.allowed += 1;
      if (figures.reachedBy.includes(`${operation} ${role}`)) cell.reached += 1;
      if (statuses[role].some((status) => status < 300 || status === 304)) cell.ok += 1;
    }
    areas.set(area, entry);
  }
  const areaTable = [
    `| area | operations | ${ROLES.map((role) => `${role} reached/allowed (2xx)`).join(' | ')} |`,
    `|---|---|${ROLES.map(() => '---').join('|')}|`,
    ...[...areas].map(
      ([area, { count, roles: cells }]) =>
        `| ${area} | ${count} | ${ROLES.map((role) => (cells[role].allowed ? `${cells[role].reached}/${cells[role].allowed} (${cells[role].ok})` : '—')).join(' | ')} |`,
    ),
  ].join('\n');
  return { roles, areas: areaTable, operations };
}
