// The guided restore (issue 53), in process over real HTTP: an admin restores a backup from the API; the host closes
// the service, the new start restores the data dir and starts on the same port; the data is the backup's again, the
// database passes integrity_check, and the restored audit trail says who restored what. Bad input is 400/404/409.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { startHostedServer, type HostedServer } from '../helpers/hostedServer.ts';
import { eventually, startTestServer } from '../helpers/server.ts';

let box: HostedServer;
before(async () => {
  box = await startHostedServer();
});
after(() => box?.close());

async function call(method: string, path: string, token?: string, body?: unknown) {
  const response = await fetch(box.url + path, {
    method,
    headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined, text };
}

test('restore from the API: the service restarts in place with the backup data, integrity ok, audited', async () => {
  await box.createUser('restorer', 'admin');
  await box.createUser('before_backup', 'viewer');
  let token = box.tokenFor('restorer');

  const run = await call('POST', '/api/system/backups', token);
  assert.equal(run.status, 201, run.text);
  await box.createUser('after_backup', 'viewer');
  const { host } = box;
  const port = new URL(host.url).port;

  const wrong = await call('POST', `/api/system/backups/${run.body.name}/restore`, token, { confirm: 'ems-20200101T000000.000Z.db' });
  assert.equal(wrong.status, 400, wrong.text);
  assert.equal(wrong.body.details[0].path, 'confirm');
  const missing = await call('POST', '/api/system/backups/ems-20200101T000000.000Z.db/restore', token, { confirm: 'ems-20200101T000000.000Z.db' });
  assert.equal(missing.status, 404, missing.text);
  // A damaged backup is refused while the service still runs: nothing stops.
  const second = await call('POST', '/api/system/backups', token);
  assert.equal(second.status, 201, second.text);
  const damaged = path.join(box.dataDir, 'backups', second.body.name);
  const handle = fs.openSync(damaged, 'r+');
  fs.writeSync(handle, Buffer.alloc(4096, 0xa5), 0, 4096, 0);
  fs.closeSync(handle);
  const refused = await call('POST', `/api/system/backups/${second.body.name}/restore`, token, { confirm: second.body.name });
  assert.equal(refused.status, 409, refused.text);
  assert.match(refused.body.error, /cannot be restored/);
  assert.equal(fs.existsSync(path.join(box.dataDir, 'restore-pending.json')), false);
  assert.equal(host.restarts, 0, 'refused requests restart nothing');

  const accepted = await call('POST', `/api/system/backups/${run.body.name}/restore`, token, { confirm: run.body.name });
  assert.equal(accepted.status, 202, accepted.text);
  assert.equal(accepted.body.backup, run.body.name);
  // The page's view: health answers again on the same port once the new start is done.
  await eventually(async () => (host.restarts === 1 && (await call('GET', '/api/health')).status === 200) || undefined, 'the service back after the restore');
  await host.settled();
  assert.equal(box.fatal(), null);
  assert.equal(new URL(host.url).port, port, 'the same port');

  const { db } = host.service.deps;
  const names = (db.sqlite.prepare('SELECT username FROM users ORDER BY username').pluck().all() as string[]).filter((name) => name !== 'admin');
  assert.deepEqual(names, ['before_backup', 'restorer'], 'the user added after the backup is gone: the data is the backup’s');
  assert.equal(db.sqlite.pragma('integrity_check', { simple: true }), 'ok');
  const trail = db.sqlite.prepare("SELECT action, username, resource_id AS backup, after FROM audit_log WHERE action = 'backup.restore'").all() as {
    username: string;
    backup: string;
    after: string;
  }[];
  assert.equal(trail.length, 1);
  assert.equal(trail[0].username, 'restorer');
  assert.equal(trail[0].backup, run.body.name);
  assert.equal(JSON.parse(trail[0].after).status, 'ok');

  token = box.tokenFor('restorer');
  const list = await call('GET', '/api/system/backups', token);
  assert.equal(list.status, 200, list.text);
  assert.equal(list.body.lastRestore.status, 'ok');
  assert.equal(list.body.lastRestore.backup, run.body.name);
  assert.equal(list.body.lastRestore.requestedBy, 'restorer');
  assert.ok(fs.existsSync(`${list.body.lastRestore.replacedDir}/ems.db`), 'the replaced database is kept on the box');
  assert.ok(box.logs.some((line) => line.includes('service restarted')));
});

test('a service nobody can restart refuses the restore (409) and restores nothing', async () => {
  const server = await startTestServer();
  try {
    const admin = await server.createUser({ role: 'admin' });
    const viewer = await server.createUser({ role: 'viewer' });
    const run = await server.request('POST', '/api/system/backups', { token: admin.accessToken });
    const path = `/api/system/backups/${run.body.name}/restore`;
    const forbidden = await server.request('POST', path, { token: viewer.accessToken, body: { confirm: run.body.name } });
    assert.equal(forbidden.status, 403);
    const refused = await server.request('POST', path, { token: admin.accessToken, body: { confirm: run.body.name } });
    assert.equal(refused.status, 409, refused.text);
    assert.match(refused.body.error, /emsctl backup restore/);
    assert.equal(fs.existsSync(`${server.dataDir}/restore-pending.json`), false);
    const empty = await server.request('POST', path, { token: admin.accessToken, body: {} });
    assert.equal(empty.status, 400, 'confirm is required');
    assert.match(empty.text, /confirm/);
  } finally {
    await server.close();
  }
});
