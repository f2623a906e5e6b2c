// The box from the browser (issue 53), over real HTTP on a real data dir: an admin takes a backup now, sees it listed,
// runs the restore drill on it and downloads its database; each step is in the audit trail; others get 403, a name
// that is not a backup's 400 or 404.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startTestServer, type TestServer, type TestUser } from '../helpers/server.ts';

let server: TestServer;
let admin: TestUser;
let operator: TestUser;
before(async () => {
  server = await startTestServer();
  admin = await server.createUser({ role: 'admin' });
  operator = await server.createUser({ role: 'operator' });
});
after(() => server?.close());

test('backup now, the list, the drill and the download, each audited', async () => {
  const run = await server.request('POST', '/api/system/backups', { token: admin.accessToken });
  assert.equal(run.status, 201, run.text);
  assert.equal(run.body.status, 'ok');
  assert.match(run.body.name, /^ems-\d{8}T\d{6}\.\d{3}Z\.db$/);
  assert.ok(run.body.sizeBytes > 0);

  const list = await server.request('GET', '/api/system/backups', { token: admin.accessToken });
  assert.equal(list.status, 200);
  assert.equal(list.body.items[0].name, run.body.name);
  assert.equal(list.body.items[0].sizeBytes, run.body.sizeBytes);

  const drill = await server.request('POST', '/api/system/backups/drill', { token: admin.accessToken });
  assert.equal(drill.status, 200, drill.text);
  assert.equal(drill.body.status, 'ok');
  assert.equal(drill.body.backup, run.body.name);
  assert.ok(drill.body.tables > 10, 'the restored copy has the tables');
  const after = await server.request('GET', '/api/system/backups', { token: admin.accessToken });
  assert.deepEqual(after.body.drill, drill.body, 'the list shows the last drill');

  const download = await fetch(`${server.url}/api/system/backups/${run.body.name}`, { headers: { authorization: `Bearer ${admin.accessToken}` } });
  assert.equal(download.status, 200);
  assert.match(download.headers.get('content-disposition')!, new RegExp(run.body.name.replace(/\./g, '\\.')));
  const bytes = Buffer.from(await download.arrayBuffer());
  assert.equal(bytes.length, run.body.sizeBytes);
  assert.equal(bytes.subarray(0, 15).toString('latin1'), 'SQLite format 3');

  const trail = server.service.deps.db.sqlite
    .prepare("SELECT action, resource_id AS resourceId FROM audit_log WHERE resource = 'backup' ORDER BY id")
    .all() as { action: string; resourceId: string }[];
  assert.deepEqual(
    trail.map((row) => row.action),
    ['backup.run', 'backup.drill', 'backup.download'],
  );
  assert.ok(trail.every((row) => row.resourceId === run.body.name));
});

test('admins only; a name that is not a backup is 400, one not on the box 404', async () => {
  for (const [method, path] of [
    ['GET', '/api/system/backups'],
    ['POST', '/api/system/backups'],
    ['POST', '/api/system/backups/drill'],
    ['GET', '/api/system/backups/ems-20260101T000000.000Z.db'],
  ] as const) {
    assert.equal((await server.request(method, path, { token: operator.accessToken })).status, 403, `${method} ${path}`);
    assert.equal((await server.request(method, path)).status, 401, `${method} ${path}`);
  }
  const bad = await server.request('GET', '/api/system/backups/..%2Fems.db', { token: admin.accessToken });
  assert.equal(bad.status, 400);
  assert.match(bad.text, /name/);
  const missing = await server.request('GET', '/api/system/backups/ems-20200101T000000.000Z.db', { token: admin.accessToken });
  assert.equal(missing.status, 404);
});
