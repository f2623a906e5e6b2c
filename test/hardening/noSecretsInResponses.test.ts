// Walks every GET route of the route table as an admin, over sample rows in every table, and checks no response carries a password or token hash.
import { answerText } from '../helpers/answerText.ts';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { seedEveryTable } from '../helpers/facilityRows.ts';

const BCRYPT = /\$2[aby]\$/;
// The smallest valid PNG: 1×1, enough for the avatar store's magic-byte check.
const PNG = Buffer.from(
  '89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d4944415478da63f8cfc0f01f0005000201a5f6d8d30000000049454e44ae426082',
  'hex',
);

/** Table behind a path segment where the name differs from the segment. */
const TABLE_FOR_SEGMENT: Record<string, string> = { models: 'model_files', plans: 'report_plans', templates: 'report_templates' };
const OTHER_PARAMS: Record<string, string> = { provider: 'github' };

async function upload(server: TestServer, method: string, path: string, token: string, name: string, type: string, bytes: Buffer): Promise<number> {
  const form = new FormData();
  form.append('file', new Blob([new Uint8Array(bytes)], { type }), name);
  const response = await fetch(server.url + path, { method, headers: { authorization: `Bearer ${token}` }, body: form });
  await response.arrayBuffer();
  return response.status;
}

/** Every concrete path for a route pattern: each :id becomes each id in the table the segment before it names. */
function concretePaths(pattern: string, idsOf: (table: string) => number[]): string[] {
  let paths = [''];
  const segments = pattern.split('/').slice(1);
  segments.forEach((segment, index) => {
    let values = [segment];
    if (segment.startsWith(':')) {
      const name = segment.slice(1);
      if (name in OTHER_PARAMS) values = [OTHER_PARAMS[name]];
      else {
        const previous = segments[index - 1] ?? '';
        const ids = idsOf(TABLE_FOR_SEGMENT[previous] ?? previous.replace(/-/g, '_'));
        values = (ids.length ? ids : [1]).map(String);
      }
    }
    paths = paths.flatMap((prefix) => values.map((value) => `${prefix}/${value}`));
  });
  return paths;
}

test('no GET route returns a password hash, a refresh-token hash or a refresh token', async (t) => {
  const server = await startTestServer({ EMS_OAUTH_GITHUB_CLIENT_ID: 'walk-client', EMS_OAUTH_GITHUB_CLIENT_SECRET: 'walk-secret' });
  t.after(() => server.close());
  const sqlite = server.service.deps.db.sqlite;

  const admin = await server.createUser({ role: 'admin' });
  const token = admin.accessToken;
  const other = await server.createUser({ role: 'operator', password: 'operator-own-password' });
  const created = await server.request('POST', '/api/users', {
    token,
    body: { username: `walk${process.pid}`, email: `walk${process.pid}@example.test`, password: 'created-by-admin', displayName: 'Walk Er', phone: '+1 555' },
  });
  assert.equal(created.status, 201);
  // A refresh token for the API-created user too, so refresh_tokens holds several hashes.
  const signedIn = await server.request('POST', '/api/auth/login', { body: { username: `walk${process.pid}`, password: 'created-by-admin' } });
  assert.equal(signedIn.status, 200);

  seedEveryTable(sqlite, server.dataDir, other.user.id);
  // Files, models and an avatar through the API as well, so their bytes sit wherever those features keep them.
  assert.ok((await upload(server, 'POST', '/api/files', token, 'notes.txt', 'text/plain', Buffer.from('site notes\n'))) < 300);
  assert.ok((await upload(server, 'POST', '/api/models', token, 'plant.glb', 'model/gltf-binary', Buffer.from('glTF-sample'))) < 300);
  assert.ok((await upload(server, 'PUT', `/api/users/${other.user.id}/avatar`, token, 'me.png', 'image/png', PNG)) < 300);
  await server.request('PUT', '/api/dashboard/settings', { token, body: { theme: 'dark' } });
  await server.request('PUT', `/api/users/${created.body.id}/role`, { token, body: { role: 'viewer' } });

  const tables = new Set(sqlite.prepare(`SELECT name FROM sqlite_master WHERE type = 'table'`).pluck().all() as string[]);
  const emptyTables = [...tables].filter(
    (table) => !table.startsWith('sqlite_') && !table.startsWith('__drizzle') && !sqlite.prepare(`SELECT count(*) FROM "${table}"`).pluck().get(),
  );
  assert.deepEqual(emptyTables, [], 'every table holds sample rows');

  const idsOf = (table: string): number[] => {
    if (!tables.has(table)) return [];
    const columns = (sqlite.prepare(`PRAGMA table_info("${table}")`).all() as { name: string }[]).map((c) => c.name);
    return columns.includes('id') ? (sqlite.prepare(`SELECT id FROM "${table}" ORDER BY id DESC LIMIT 5`).pluck().all() as number[]) : [];
  };

  const routes = server.service.routes.filter((route) => route.method === 'GET');
  const statuses = new Map<string, number>();
  const responses: { path: string; text: string }[] = [];
  for (const route of routes) {
    for (const path of concretePaths(route.path, idsOf)) {
      const response = await fetch(server.url + path, { headers: { authorization: `Bearer ${token}`, accept: 'application/json' }, redirect: 'manual' });
      const headers = [...response.headers].map(([name, value]) => `${name}: ${value}`).join('\n');
      responses.push({ path, text: `${headers}\n\n${await answerText(response)}` });
      statuses.set(path, response.status);
    }
  }

  // The secrets as stored after the walk (a route might have issued new ones).
  const passwordHashes = sqlite.prepare('SELECT password_hash FROM users').pluck().all() as string[];
  const tokenHashes = sqlite.prepare('SELECT token_hash FROM refresh_tokens').pluck().all() as string[];
  const refreshTokens = [admin.refreshToken, other.refreshToken, signedIn.body.refreshToken as string];
  assert.ok(passwordHashes.length >= 4 && tokenHashes.length >= 3, 'the walk had secrets to leak');
  // The box's fleet credential (fleet_link, seeded with a sample row): /api/health shows the fleet's URL, never it.
  const fleetCredentials = sqlite.prepare('SELECT credential FROM fleet_link').pluck().all() as string[];
  assert.equal(fleetCredentials.length, 1);
  const secrets = [...passwordHashes, ...tokenHashes, ...refreshTokens, ...fleetCredentials];

  for (const { path, text } of responses) {
    assert.doesNotMatch(text, BCRYPT, `${path} carries a bcrypt hash`);
    for (const secret of secrets) assert.ok(!text.includes(secret), `${path} carries a stored secret (${secret.slice(0, 6)}…)`);
  }

  const serverErrors = [...statuses].filter(([, status]) => status >= 500);
  assert.deepEqual(serverErrors, [], 'no GET route fails with a server error on sample data');
  // The walk reached the records that hold secrets, rather than bouncing off 4xx.
  for (const path of [
    '/api/auth/me',
    '/api/users',
    `/api/users/${other.user.id}`,
    `/api/users/${created.body.id}`,
    '/api/audit',
    `/api/users/${other.user.id}/avatar`,
  ]) {
    assert.equal(statuses.get(path), 200, `${path} answered ${statuses.get(path)}`);
  }
  assert.ok(routes.length >= 30 && responses.length > routes.length, `walked ${routes.length} routes as ${responses.length} requests`);
});
