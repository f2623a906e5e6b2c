// /api/models and the public /static/models/: model types, limits, roles, deletion, and no way out of the models directory.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { startTestServer, type TestServer, type TestUser } from '../helpers/server.ts';
import { fileBody, filesUnder, rawRequest, sha256, streamUpload, waitFor } from '../helpers/uploads.ts';

const LIMIT = 8192;

describe('models', () => {
  let server: TestServer;
  let operator: TestUser;
  let viewer: TestUser;

  before(async () => {
    server = await startTestServer({ EMS_UPLOAD_MAX_BYTES: String(LIMIT) });
    operator = await server.createUser({ role: 'operator' });
    viewer = await server.createUser({ role: 'viewer' });
  });
  after(() => server.close());

  const modelsDir = () => path.join(server.dataDir, 'models');
  const rowCount = () => server.service.deps.db.sqlite.prepare('SELECT count(*) FROM model_files').pluck().get() as number;

  async function upload(data: Buffer | string, filename: string, contentType = 'application/octet-stream') {
    const multipart = fileBody(data, filename, contentType);
    return server.request('POST', '/api/models', { token: operator.accessToken, raw: multipart.body, headers: { 'content-type': multipart.contentType } });
  }

  async function removeAll() {
    for (const id of server.service.deps.db.sqlite.prepare('SELECT id FROM model_files').pluck().all() as number[]) {
      assert.equal((await server.request('DELETE', `/api/models/${id}`, { token: operator.accessToken })).status, 204);
    }
  }

  test('each model format is stored, typed by extension and served publicly with caching headers', async () => {
    const formats: Array<[string, string]> = [
      ['building.glb', 'model/gltf-binary'],
      ['Building.GLTF', 'model/gltf+json'],
      ['pump.fbx', 'application/vnd.autodesk.fbx'],
      ['chiller.obj', 'model/obj'],
      ['part.stl', 'model/stl'],
    ];
    for (const [name, type] of formats) {
      const data = randomBytes(2000);
      // The client's Content-Type is ignored for models: the extension decides.
      const created = await upload(data, name, 'text/html');
      assert.equal(created.status, 201, created.text);
      assert.equal(created.body.mimeType, type, name);
      assert.equal(created.body.sha256, sha256(data));
      assert.match(created.body.storedName, new RegExp(`^[a-f0-9]{32}${path.extname(name).toLowerCase().replace('.', '\\.')}$`));
      assert.equal(created.body.url, `/static/models/${created.body.storedName}`);
      assert.ok(fs.existsSync(path.join(modelsDir(), created.body.storedName)));

      const open = await rawRequest(server.url, 'GET', created.body.url);
      assert.equal(open.status, 200, `${name}: no token needed`);
      assert.equal(open.headers['content-type'], type);
      assert.equal(open.headers['content-length'], '2000');
      assert.match(String(open.headers['cache-control']), /max-age=31536000/);
      assert.equal(open.headers['x-content-type-options'], 'nosniff');
      assert.ok(open.headers.etag);
      assert.ok(open.body.equals(data), `${name} served byte for byte`);

      const revalidated = await rawRequest(server.url, 'GET', created.body.url, { headers: { 'if-none-match': String(open.headers.etag) } });
      assert.equal(revalidated.status, 304);
      const head = await rawRequest(server.url, 'HEAD', created.body.url);
      assert.equal(head.status, 200);
      assert.equal(head.body.length, 0);

      const raw = await rawRequest(server.url, 'GET', created.body.downloadUrl, {
        headers: { authorization: `Bearer ${viewer.accessToken}`, range: 'bytes=100-199' },
      });
      assert.equal(raw.status, 206);
      assert.ok(raw.body.equals(data.subarray(100, 200)));
      assert.equal(raw.headers['content-type'], type);
      assert.match(String(raw.headers['content-disposition']), /^attachment;/);
    }
    const list = await server.request('GET', '/api/models', { token: viewer.accessToken });
    assert.equal(list.status, 200);
    assert.equal(list.body.total, formats.length);
    assert.equal(list.body.items[0].originalName, 'part.stl', 'newest first');
    await removeAll();
  });

  test('anything but a model format is 415 before a byte is stored', async () => {
    for (const name of ['scene.html', 'scene.svg', 'model', 'model.glb.html', 'x.exe']) {
      const response = await upload('<html><script>alert(1)</script></html>', name, 'model/gltf-binary');
      assert.equal(response.status, 415, name);
      assert.match(response.body.error, /\.glb/);
    }
    assert.deepEqual(filesUnder(path.join(server.dataDir, 'tmp')), []);
    assert.deepEqual(filesUnder(modelsDir()), []);
    assert.equal(rowCount(), 0);
  });

  test('the static route cannot leave the models directory', async () => {
    const created = await upload(randomBytes(100), 'scene.glb');
    assert.equal(created.status, 201);
    fs.writeFileSync(path.join(modelsDir(), '.hidden.glb'), 'hidden');
    const attempts = [
      '/static/models/..%2f..%2fems.db',
      '/static/models/..%2F..%2Fems.db',
      '/static/models/%2e%2e/%2e%2e/ems.db',
      '/static/models/../ems.db',
      '/static/models/../../ems.db',
      '/static/models/..\\..\\ems.db',
      '/static/models/..%5c..%5cems.db',
      '/static/models//etc/passwd',
      '/static/models/%2fetc%2fpasswd',
      '/static/models/',
      '/static/models/.hidden.glb',
      `/static/models/${created.body.storedName}%00.glb`,
      `/static/models/${created.body.storedName}/`,
      `/static/models/${created.body.storedName.toUpperCase()}`,
    ];
    for (const attempt of attempts) {
      const response = await rawRequest(server.url, 'GET', attempt);
      assert.ok(response.status === 404 || response.status === 400 || response.status === 401, `${attempt} answered ${response.status}`);
      assert.ok(!response.body.includes('SQLite format'), `${attempt} leaked the database`);
      assert.ok(!response.body.includes('root:'), `${attempt} leaked /etc/passwd`);
      assert.ok(!response.body.includes('hidden'), `${attempt} served a hidden file`);
    }
    assert.equal((await rawRequest(server.url, 'GET', '/static/models/..%2f..%2fems.db')).status, 404);
    const write = await rawRequest(server.url, 'PUT', created.body.url, { body: Buffer.from('overwrite') });
    assert.equal(write.status, 405);
    fs.rmSync(path.join(modelsDir(), '.hidden.glb'));
    await removeAll();
  });

  test('deleting a model removes its file, its public URL and its place in the 3D scene', async () => {
    const created = await upload(randomBytes(500), 'plant.glb');
    const sqlite = server.service.deps.db.sqlite;
    sqlite.prepare('UPDATE three_d_config SET model_file_id = ?').run(created.body.id);
    const sceneUpdatedAt = sqlite.prepare('SELECT updated_at FROM three_d_config').pluck().get();
    assert.equal((await server.request('DELETE', `/api/models/${created.body.id}`, { token: viewer.accessToken })).status, 403);
    assert.equal((await server.request('DELETE', `/api/models/${created.body.id}`, { token: operator.accessToken })).status, 204);
    assert.equal(fs.existsSync(path.join(modelsDir(), created.body.storedName)), false);
    assert.equal((await rawRequest(server.url, 'GET', created.body.url)).status, 404);
    assert.equal((await server.request('GET', `/api/models/${created.body.id}`, { token: viewer.accessToken })).status, 404);
    assert.equal(sqlite.prepare('SELECT model_file_id FROM three_d_config').pluck().get(), null);
    // Taking the deleted model out is not an edit of the scene by anyone.
    assert.equal(sqlite.prepare('SELECT updated_at FROM three_d_config').pluck().get(), sceneUpdatedAt);
  });

  test('roles: viewers read, operators write', async () => {
    const multipart = fileBody(randomBytes(10), 'v.glb');
    const refused = await server.request('POST', '/api/models', {
      token: viewer.accessToken,
      raw: multipart.body,
      headers: { 'content-type': multipart.contentType },
    });
    assert.equal(refused.status, 403);
    assert.equal((await server.request('GET', '/api/models')).status, 401);
    assert.equal((await server.request('GET', '/api/models', { token: viewer.accessToken })).status, 200);
    assert.equal(rowCount(), 0);
  });

  test('exactly the limit is accepted, one byte more is 413 with no leftovers; an aborted upload is cleaned up', async () => {
    const exact = await upload(randomBytes(LIMIT), 'exact.glb');
    assert.equal(exact.status, 201);
    assert.equal(exact.body.size, LIMIT);
    const over = await upload(randomBytes(LIMIT + 1), 'over.glb');
    assert.equal(over.status, 413);
    assert.deepEqual(filesUnder(path.join(server.dataDir, 'tmp')), []);
    assert.deepEqual(filesUnder(modelsDir()), [exact.body.storedName]);
    assert.equal(rowCount(), 1);

    const tmp = path.join(server.dataDir, 'tmp');
    const aborted = await streamUpload(server.url, '/api/models', {
      token: operator.accessToken,
      size: LIMIT,
      filename: 'cut.glb',
      abortAfter: LIMIT / 2,
      beforeAbort: () => waitFor(() => filesUnder(tmp).length > 0, 'the server opened its temp file'),
    });
    assert.equal(aborted.status, 0);
    await waitFor(() => filesUnder(tmp).length === 0, 'temp file removed after the abort');
    assert.deepEqual(filesUnder(modelsDir()), [exact.body.storedName]);
    assert.equal(rowCount(), 1);
    await removeAll();
  });
});
