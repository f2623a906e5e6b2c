// The contract fuzzer for the fleet service (issue 55 item 5): walks every operation of the fleet's served OpenAPI
// document (/documentation/json) as anonymous, a site (its credential), a viewer, a site-limited admin and an admin of
// every site, first with seeded valid ids and valid input (drawn from the document's own schemas), then with seeded
// hostile input (path ids, query parameters, bodies), and checks each answer against the document: no 5xx, no status
// the operation does not declare, every JSON body valid against the declared schema. The site-facing writes that end a
// caller's standing (leave, revoke) run last.
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { createEnrolmentCode } from '../../src/fleet/enrolment.ts';
import { acceptInvitation, invite } from '../../src/fleet/people.ts';
import { addUser } from '../../src/fleet/app.ts';
import { enrolSite, type FleetInstance, intervalBatch, quarterAgo, sendBatch } from '../helpers/fleet.ts';
import { hostileValue, Random, validValue } from './apiFuzzer.ts';

const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (ajv: Ajv) => Ajv;

type Json = any;
export type FleetCaller = 'anonymous' | 'site' | 'viewer' | 'limitedAdmin' | 'admin';
const CALLERS: FleetCaller[] = ['anonymous', 'site', 'viewer', 'limitedAdmin', 'admin'];

export type FleetFailure = { caller: FleetCaller; request: string; status: number; problem: string; body: string };
export type FleetFuzzFigures = {
  operations: number;
  requests: number;
  failures: FleetFailure[];
  statuses: Record<string, number>;
  /** Operations that answered some caller a 2xx. */
  succeeded: string[];
  ms: number;
};

type Operation = { key: string; method: string; path: string; op: Json };

/**
 * The order of the walk: the second box decided while the seeded one is quarantined (choosing the box clears it too);
 * leave and revoke last, as they end the seeded site's standing for the requests after them.
 */
const ORDER = ['POST /api/fleet/sites/{id}/second-box', '*', 'POST /api/fleet/leave', 'POST /api/fleet/sites/{id}/revoke'];
const place = (key: string) => (ORDER.includes(key) ? ORDER.indexOf(key) : ORDER.indexOf('*'));
const BOX_A = 'aaaaaaaa-0000-4000-8000-00000000000a';
const BOX_B = 'bbbbbbbb-0000-4000-8000-00000000000b';

function inline(doc: Json, schema: Json): Json {
  return JSON.parse(JSON.stringify(schema).replaceAll('{"$ref":"#/components/schemas/FleetError"}', JSON.stringify(doc.components.schemas.FleetError)));
}

export async function runFleetFuzz(fleet: FleetInstance, options: { seed: number; hostilePerCaller: number }): Promise<FleetFuzzFigures> {
  const started = Date.now();
  const random = new Random(options.seed);
  const doc = (await (await fetch(`${fleet.url}/documentation/json`, { headers: { 'accept-encoding': 'identity' } })).json()) as Json;
  const ajv = new Ajv({ strict: false, allErrors: false });
  addFormats(ajv);
  const operations: Operation[] = [];
  for (const [path, item] of Object.entries<Json>(doc.paths))
    for (const [method, op] of Object.entries<Json>(item)) operations.push({ key: `${method.toUpperCase()} ${path}`, method: method.toUpperCase(), path, op });
  operations.sort((a, b) => place(a.key) - place(b.key));

  // The seeded records: two sites with rows, one user of each kind (the limited admin over the first site only).
  const mine = await enrolSite(fleet, `Fuzz ${options.seed} A`);
  const theirs = await enrolSite(fleet, `Fuzz ${options.seed} B`);
  // The first site's box is BOX_A; BOX_B sends with its credential too, so a second box is quarantined there.
  await sendBatch(fleet.url, mine.credential, { ...intervalBatch({ after: 0, from: quarterAgo(3), count: 2 }), installId: BOX_A });
  await sendBatch(fleet.url, mine.credential, { ...intervalBatch({ after: 4, from: quarterAgo(3), count: 1 }), installId: BOX_B });
  await sendBatch(fleet.url, theirs.credential, intervalBatch({ after: 0, from: quarterAgo(3), count: 2 }));
  // An active alert of the first site (number 7), as its box would send it: the valid id of the acknowledgement route.
  const ALERT_ID = '7';
  await fleet.db.pool.query(
    `insert into site_alerts (site_id, alert_id, title, level, status, occurred_at, seq) values ($1, $2, 'Fuzz alert', 'warning', 'active', now(), 1)`,
    [mine.siteId, ALERT_ID],
  );
  const tokens: Record<FleetCaller, string | undefined> = {
    anonymous: undefined,
    site: mine.credential,
    viewer: (await addUser(fleet.db.pool, `fuzz-viewer-${options.seed}`, 'viewer')).token,
    limitedAdmin: (await addUser(fleet.db.pool, `fuzz-limited-${options.seed}`, 'admin', [mine.siteId])).token,
    admin: (await addUser(fleet.db.pool, `fuzz-admin-${options.seed}`, 'admin')).token,
  };

  const figures: FleetFuzzFigures = { operations: operations.length, requests: 0, failures: [], statuses: {}, succeeded: [], ms: 0 };
  const succeeded = new Set<string>();
  const validators = new Map<string, ValidateFunction>();

  const check = async (operation: Operation, caller: FleetCaller, url: string, body: string | undefined) => {
    const response = await fetch(`${fleet.url}${url}`, {
      method: operation.method,
      headers: {
        ...(tokens[caller] ? { authorization: `Bearer ${tokens[caller]}` } : {}),
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      body,
      redirect: 'manual',
    });
    const bytes = Buffer.from(await response.arrayBuffer());
    figures.requests++;
    figures.statuses[response.status] = (figures.statuses[response.status] ?? 0) + 1;
    const request = `${operation.method} ${url.slice(0, 160)}${body !== undefined ? ` ${body.slice(0, 120)}` : ''}`;
    const fail = (problem: string) => figures.failures.push({ caller, request, status: response.status, problem, body: bytes.toString('utf8', 0, 300) });
    const declared = operation.op.responses[String(response.status)];
    if (response.status >= 500 && response.status !== 503) return fail('a 5xx');
    if (!declared) return fail('a status the operation does not declare');
    if (response.status < 400) succeeded.add(operation.key);
    const [type, media] = Object.entries<Json>(declared.content ?? {})[0] ?? [];
    if (!type) return bytes.length === 0 ? undefined : fail('a body where none is declared');
    if (!String(response.headers.get('content-type')).startsWith(type)) return fail(`content type ${response.headers.get('content-type')}, declared ${type}`);
    if (type !== 'application/json') return;
    const id = `${operation.key} ${response.status}`;
    if (!validators.has(id)) validators.set(id, ajv.compile(inline(doc, media.schema)));
    const validate = validators.get(id)!;
    if (!validate(JSON.parse(bytes.toString('utf8')))) fail(`the body does not match its schema: ${ajv.errorsText(validate.errors)}`);
  };

  // A user who signs in with a password.
  const PASSWORD = `fuzz password ${options.seed}`;
  await acceptInvitation(fleet.db.pool, (await invite(fleet.db.pool, { name: `fuzz-password-${options.seed}`, role: 'viewer' })).invitation, PASSWORD);
  // A user the walk may change (its role and sites): the callers' own accounts are never the valid id.
  const sacrificial = (await addUser(fleet.db.pool, `fuzz-spare-${options.seed}`, 'viewer')).id;
  const pathWith = (operation: Operation, id: string, alertId = ALERT_ID) =>
    operation.path
      .replace('{id}', encodeURIComponent(operation.path.startsWith('/api/fleet/users/') && id === mine.siteId ? String(sacrificial) : id))
      .replace('{alert}', encodeURIComponent(alertId));
  const queryOf = (entries: Array<[string, unknown]>) =>
    entries.length ? `?${entries.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(String(v))}`).join('&')}` : '';
  const queryParameters = (operation: Operation) => (operation.op.parameters ?? []).filter((p: Json) => p.in === 'query');

  for (const operation of operations) {
    const schema = operation.op.requestBody?.content?.['application/json']?.schema;
    for (const caller of CALLERS) {
      // A valid-id request: the seeded site, declared query parameters with valid values, a body valid by its schema
      // (a real batch for the ingest, a real code for the enrolment).
      let body: string | undefined = schema ? JSON.stringify(validValue(doc, random, schema)) : undefined;
      const valid: Record<string, () => Promise<unknown> | unknown> = {
        'POST /api/fleet/ingest': async () => ({ ...intervalBatch({ after: 4, from: quarterAgo(1), count: 1, withMetadata: false }), installId: BOX_A }),
        'POST /api/fleet/sites/{id}/box': async () => ({ installId: BOX_A }),
        'POST /api/fleet/sites/{id}/second-box': async () => ({ decision: 'discard', installId: BOX_B, reason: `fuzz ${options.seed}` }),
        'POST /api/fleet/users': async () => ({ name: `fuzz-invited-${options.seed}-${caller}`, role: 'viewer', sites: [theirs.siteId] }),
        'PATCH /api/fleet/users/{id}': async () => ({ role: 'viewer', sites: [theirs.siteId] }),
        'POST /api/fleet/auth/sign-in': async () => ({ name: `fuzz-password-${options.seed}`, password: PASSWORD }),
        'POST /api/fleet/auth/accept': async () => ({
          invitation: (await invite(fleet.db.pool, { name: `fuzz-accept-${options.seed}-${caller}`, role: 'viewer' })).invitation,
          password: PASSWORD,
        }),
      };
      if (valid[operation.key]) body = JSON.stringify(await valid[operation.key]!());
      if (operation.key === 'POST /api/fleet/enrol') body = JSON.stringify({ code: (await createEnrolmentCode(fleet.db.pool, `Fuzz ${caller}`)).code });
      const query: Array<[string, unknown]> = queryParameters(operation).some((p: Json) => p.name === 'site') ? [['site', mine.siteId]] : [];
      await check(operation, caller, `${pathWith(operation, mine.siteId)}${queryOf(query)}`, body);
    }
    for (const caller of CALLERS) {
      // An XLSX export costs a worker's second of CPU: hostile input goes to it only where it is refused before that.
      if (operation.op.responses['200']?.content && !operation.op.responses['200'].content['application/json'] && !['anonymous', 'site'].includes(caller))
        continue;
      for (let i = 0; i < options.hostilePerCaller; i++) {
        // An empty id is another path (another operation's, or none), not this operation's.
        const id = random.pick([
          mine.siteId,
          theirs.siteId,
          '00000000-0000-4000-8000-000000000000',
          String(hostileValue(doc, random, { type: 'string' })) || 'x',
        ]);
        const query = queryParameters(operation).map((p: Json) => [
          p.name,
          random.chance(0.5) ? hostileValue(doc, random, p.schema) : validValue(doc, random, p.schema),
        ]);
        if (random.chance(0.3)) query.push([random.pick(['unknown', 'page', 'sort']), random.int(-5, 5)]);
        const body = schema
          ? random.chance(0.15)
            ? random.pick(['{', 'not json', '[]', 'null', '{"a":'])
            : JSON.stringify(random.chance(0.5) ? hostileValue(doc, random, schema) : validValue(doc, random, schema))
          : undefined;
        const alertId = random.pick([ALERT_ID, '8', '0', '-1', '99999999999999999999', String(hostileValue(doc, random, { type: 'string' })) || 'x']);
        await check(operation, caller, `${pathWith(operation, id, alertId)}${queryOf(query as Array<[string, unknown]>)}`, body);
      }
    }
  }
  figures.succeeded = [...succeeded].sort();
  figures.ms = Date.now() - started;
  return figures;
}
