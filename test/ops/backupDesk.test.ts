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

test('the box: version, no HTTPS, not joined; with a certificate its subject, expiry and the 30-day warning', async () => {
  const plain = await server.request('GET', '/api/system/box', { token: admin.accessToken });
  assert.equal(plain.status, 200, plain.text);
  assert.match(plain.body.version, /^\d+\.\d+\.\d+/);
  assert.deepEqual(plain.body.https, { enabled: false, subject: null, issuer: null, validTo: null, daysLeft: null, warning: false, error: null });
  assert.deepEqual(plain.body.fleet, { joined: false, state: 'off', fleetUrl: null, lagSec: null, unsentRows: 0, lastError: null });
  assert.equal((await server.request('GET', '/api/system/box', { token: operator.accessToken })).status, 403);

  const { selfSignedCertificate } = await import('../helpers/certificate.ts');
  const { tempDir } = await import('../helpers/server.ts');
  const tls = selfSignedCertificate(tempDir('ems-box-cert-'), 'box');
  const https = await startTestServer({ EMS_TLS_CERT: tls.certFile, EMS_TLS_KEY: tls.keyFile });
  try {
    const who = await https.createUser({ role: 'admin' });
    const crypto = await import('node:crypto');
    const fs = await import('node:fs');
    const { get } = await import('node:https');
    const cert = new crypto.X509Certificate(fs.readFileSync(tls.certFile));
    // Over the box's own HTTPS, trusting its self-signed certificate.
    const box = await new Promise<{ status: number; body: any }>((resolve, reject) => {
      get(`${https.url}/api/system/box`, { ca: fs.readFileSync(tls.certFile), headers: { authorization: `Bearer ${who.accessToken}` } }, (response) => {
        let text = '';
        response.on('data', (chunk) => (text += chunk));
        response.on('end', () => resolve({ status: response.statusCode!, body: JSON.parse(text) }));
      }).on('error', reject);
    });
    assert.equal(box.status, 200, JSON.stringify(box.body));
    assert.equal(box.body.https.enabled, true);
    assert.equal(box.body.https.subject, cert.subject.split('\n').filter(Boolean).join(', '));
    assert.equal(box.body.https.validTo, new Date(cert.validTo).toISOString());
    const days = Math.floor((Date.parse(cert.validTo) - Date.now()) / 86_400_000);
    assert.equal(box.body.https.daysLeft, days);
    assert.equal(box.body.https.warning, days <= 30);
  } finally {
    await https.close();
  }
});
