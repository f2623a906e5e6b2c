// /api/configs and /api/three-d-config: viewers read, admins write, values validated (time zone, locale, currency, numbers, ids).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { insertUpload } from '../helpers/facilityRows.ts';

let server: TestServer;
before(async () => {
  server = await startTestServer();
});
after(() => server.close());

function detailPaths(body: { details?: { path: string }[] }): string[] {
  return (body.details ?? []).map((detail) => detail.path);
}

const vec = (x: number, y: number, z: number) => ({ x, y, z });

test('platform config: role matrix for read and write', async () => {
  const viewer = await server.createUser();
  const operator = await server.createUser({ role: 'operator' });
  const read = await server.request('GET', '/api/configs', { token: viewer.accessToken });
  assert.equal(read.status, 200);
  assert.deepEqual(Object.keys(read.body).sort(), [
    'carbonFactor',
    'currency',
    'electricityPrice',
    'floorAreaM2',
    'locale',
    'logoUrl',
    // The electricity price in force today (issue 52: the set-up's price prices).
    'priceInForce',
    'refreshIntervalSec',
    'siteName',
    'timezone',
    'updatedAt',
  ]);
  assert.equal((await server.request('GET', '/api/configs')).status, 401);
  assert.equal((await server.request('PUT', '/api/configs', { token: viewer.accessToken, body: { siteName: 'Nope' } })).status, 403);
  assert.equal((await server.request('PUT', '/api/configs', { token: operator.accessToken, body: { siteName: 'Nope' } })).status, 403);
  assert.notEqual((await server.request('GET', '/api/configs', { token: viewer.accessToken })).body.siteName, 'Nope');
});

test('platform config: an admin updates some fields, the rest keep their value', async () => {
  const admin = await server.createUser({ role: 'admin' });
  const before = (await server.request('GET', '/api/configs', { token: admin.accessToken })).body;
  const updated = await server.request('PUT', '/api/configs', {
    token: admin.accessToken,
    body: { siteName: 'North Campus', timezone: 'Europe/Berlin', locale: 'de-de', currency: 'CHF', electricityPrice: 0.31, logoUrl: '/static/logo.png' },
  });
  assert.equal(updated.status, 200);
  assert.equal(updated.body.siteName, 'North Campus');
  assert.equal(updated.body.timezone, 'Europe/Berlin');
  assert.equal(updated.body.locale, 'de-DE', 'stored in canonical form');
  assert.equal(updated.body.currency, 'CHF');
  assert.equal(updated.body.electricityPrice, 0.31);
  assert.equal(updated.body.logoUrl, '/static/logo.png');
  assert.equal(updated.body.carbonFactor, before.carbonFactor);
  assert.equal(updated.body.refreshIntervalSec, before.refreshIntervalSec);
  assert.deepEqual((await server.request('GET', '/api/configs', { token: admin.accessToken })).body, updated.body);

  const publicView = await server.request('GET', '/api/dashboard');
  assert.equal(publicView.body.platform.siteName, 'North Campus');
  assert.equal(publicView.body.platform.timezone, 'Europe/Berlin');
});

test('platform config: 400 with details for invalid values, nothing stored', async () => {
  const admin = await server.createUser({ role: 'admin' });
  const token = admin.accessToken;
  const before = (await server.request('GET', '/api/configs', { token })).body;
  const cases: [Record<string, unknown>, string[]][] = [
    [{ timezone: 'Mars/Olympus_Mons' }, ['body.timezone']],
    [{ locale: 'not a locale!' }, ['body.locale']],
    [{ currency: 'ABC' }, ['body.currency']],
    [{ currency: 'eur' }, ['body.currency']],
    [{ electricityPrice: -0.1 }, ['body.electricityPrice']],
    [{ carbonFactor: 'heavy' }, ['body.carbonFactor']],
    [{ refreshIntervalSec: 2 }, ['body.refreshIntervalSec']],
    [{ refreshIntervalSec: 7.5 }, ['body.refreshIntervalSec']],
    [{ siteName: '' }, ['body.siteName']],
    [{ logoUrl: 'javascript:alert(1)' }, ['body.logoUrl']],
    // A path is a path: these two are other hosts to a browser.
    [{ logoUrl: '//evil.example/x.png' }, ['body.logoUrl']],
    [{ logoUrl: '/\\evil.example/x.png' }, ['body.logoUrl']],
    [{ timezone: 'Nowhere/City', currency: 'QQQ' }, ['body.timezone', 'body.currency']],
  ];
  for (const [body, paths] of cases) {
    const response = await server.request('PUT', '/api/configs', { token, body });
    assert.equal(response.status, 400, JSON.stringify(body));
    assert.deepEqual(detailPaths(response.body), paths, JSON.stringify(body));
  }
  const empty = await server.request('PUT', '/api/configs', { token, body: {} });
  assert.equal(empty.status, 400);
  assert.deepEqual((await server.request('GET', '/api/configs', { token })).body, before);
});

test('3D config: defaults, role matrix, update with hotspots, labels and a model file', async () => {
  const admin = await server.createUser({ role: 'admin' });
  const operator = await server.createUser({ role: 'operator' });
  const viewer = await server.createUser();

  const initial = await server.request('GET', '/api/three-d-config', { token: viewer.accessToken });
  assert.equal(initial.status, 200);
  assert.deepEqual(Object.keys(initial.body).sort(), ['ambientIntensity', 'cameraPreset', 'hotspots', 'labels', 'modelFileId', 'modelUrl', 'updatedAt']);
  assert.deepEqual(Object.keys(initial.body.cameraPreset).sort(), ['fov', 'position', 'target']);
  assert.equal((await server.request('GET', '/api/three-d-config')).status, 401);
  assert.equal((await server.request('PUT', '/api/three-d-config', { token: operator.accessToken, body: { ambientIntensity: 1 } })).status, 403);
  assert.equal((await server.request('PUT', '/api/three-d-config', { token: viewer.accessToken, body: { ambientIntensity: 1 } })).status, 403);

  const model = insertUpload(server.service.deps.db.sqlite, server.dataDir, 'model_files', admin.user.id);
  const scene = {
    cameraPreset: { position: vec(10, 20, 30), target: vec(0, 0, 0), fov: 45 },
    ambientIntensity: 0.8,
    hotspots: [
      { id: 'h1', name: 'Chiller 1', position: vec(1, 0, 2), pointCode: 'CH1.SUPPLY_T', area: 'Plant room' },
      { id: 'h2', name: 'Main meter', position: vec(-3, 0, 4) },
    ],
    labels: [{ id: 'l1', text: 'Building A', position: vec(0, 12, 0) }],
    modelFileId: model.id,
  };
  const saved = await server.request('PUT', '/api/three-d-config', { token: admin.accessToken, body: scene });
  assert.equal(saved.status, 200);
  const { updatedAt, modelUrl, ...rest } = saved.body;
  assert.deepEqual(rest, scene);
  assert.equal(modelUrl, `/static/models/${model.storedName}`);
  assert.equal(typeof updatedAt, 'string');

  const partial = await server.request('PUT', '/api/three-d-config', { token: admin.accessToken, body: { ambientIntensity: 0.2, modelFileId: null } });
  assert.equal(partial.status, 200);
  assert.equal(partial.body.ambientIntensity, 0.2);
  assert.equal(partial.body.modelFileId, null);
  assert.equal(partial.body.modelUrl, null);
  assert.deepEqual(partial.body.hotspots, scene.hotspots, 'lists not sent are kept');
  assert.deepEqual((await server.request('GET', '/api/three-d-config', { token: viewer.accessToken })).body, partial.body);

  const publicScene = (await server.request('GET', '/api/dashboard')).body.scene;
  assert.deepEqual(publicScene, { cameraPreset: scene.cameraPreset, ambientIntensity: 0.2, hotspots: scene.hotspots, labels: scene.labels, modelUrl: null });
});

test('3D config: 400 with details for invalid scenes, nothing stored', async () => {
  const admin = await server.createUser({ role: 'admin' });
  const token = admin.accessToken;
  const before = (await server.request('GET', '/api/three-d-config', { token })).body;
  const hotspot = { id: 'h', name: 'Pump', position: vec(0, 0, 0) };
  const cases: [Record<string, unknown>, string[]][] = [
    [{ cameraPreset: { position: vec(0, 0, 0), target: vec(0, 0, 0), fov: 0 } }, ['body.cameraPreset.fov']],
    [{ cameraPreset: { position: { x: 0, y: 0 }, target: vec(0, 0, 0), fov: 50 } }, ['body.cameraPreset.position.z']],
    [{ ambientIntensity: -1 }, ['body.ambientIntensity']],
    [{ hotspots: [hotspot, { ...hotspot, name: 'Other pump' }] }, ['body.hotspots.1.id']],
    [{ labels: [{ id: 'l', text: '', position: vec(0, 0, 0) }] }, ['body.labels.0.text']],
    [{ hotspots: [{ ...hotspot, position: vec(0, 1e9, 0) }] }, ['body.hotspots.0.position.y']],
    [{ modelFileId: 987654 }, ['body.modelFileId']],
    [{ modelFileId: 'model.glb' }, ['body.modelFileId']],
  ];
  for (const [body, paths] of cases) {
    const response = await server.request('PUT', '/api/three-d-config', { token, body });
    assert.equal(response.status, 400, JSON.stringify(body));
    assert.deepEqual(detailPaths(response.body), paths, JSON.stringify(body));
  }
  assert.equal((await server.request('PUT', '/api/three-d-config', { token, body: {} })).status, 400);
  assert.deepEqual((await server.request('GET', '/api/three-d-config', { token })).body, before);
});
