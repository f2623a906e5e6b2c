// One public-title rule for every public payload (issue 39, item 3): a gateway alarm whose text names a person and a
// badge ("Badge 4711 John Doe ...", raised on the standalone simulator and polled like the service does) is shown to
// callers without a token as "Alarm on <point>" on /api/dashboard, /api/wallboard and /api/wallboard?area=, and its
// text appears in no public GET answer at all; an alert a person wrote keeps its title.
import { answerText } from '../helpers/answerText.ts';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { AlarmPoller } from '../../src/facility/notifications/poller.ts';
import { startGatewaySimulator, type RunningSimulator } from '../../src/gateway/simulator/server.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

const HOSTILE = 'Badge 4711 John Doe SECRETNAME forced door 3';
const SECRET = /4711|John Doe|SECRETNAME|forced door/;

describe('public payloads and gateway alarm text', () => {
  let sim: RunningSimulator;
  let server: TestServer;
  before(async () => {
    sim = await startGatewaySimulator({ tokenTtlSec: 10 * 365 * 86_400 });
    server = await startTestServer({ EMS_IOT_BASE_URL: sim.url, EMS_IOT_USERNAME: 'ems', EMS_IOT_PASSWORD: 'ems-simulator' });
    const admin = (await server.createUser({ role: 'admin' })).accessToken;
    const areas = [{ name: 'Lobby', todayKwh: 12.5, monthKwh: 120, yearKwh: 1400, powerKw: 3.1 }];
    assert.equal((await server.request('PUT', '/api/energy/areas', { token: admin, body: { areas } })).status, 200);
    const { deps } = server.service;
    const raised = await fetch(`${sim.url}/sim/alarms`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${(await deps.iot.token()).token}` },
      body: JSON.stringify({ code: 'door.badge', level: 'critical', message: HOSTILE }),
    });
    assert.equal(raised.status, 201, await raised.text());
    const poller = new AlarmPoller({ iot: deps.iot, alerts: deps.alerts, logger: deps.logger, intervalMs: 60_000 });
    assert.equal((await poller.poll()).raised >= 1, true);
    const list = await server.request('GET', `/api/alerts?q=${encodeURIComponent('John Doe')}`, { token: admin });
    assert.equal(list.body.total, 1, 'the gateway text is kept for signed-in users');
    // An operator puts the alarm in the lobby: it is then on that area's wallboard too.
    const placed = await server.request('PUT', `/api/alerts/${list.body.items[0].id}`, { token: admin, body: { area: 'Lobby' } });
    assert.equal(placed.status, 200, placed.text);
    const written = await server.request('POST', '/api/alerts', {
      token: admin,
      body: { title: 'Lobby lift out of service', level: 'warning', area: 'Lobby' },
    });
    assert.equal(written.status, 201, written.text);
  });
  after(async () => {
    await server?.close();
    await sim?.close();
  });

  const titlesOn = async (path: string, pick: (body: any) => { title: string }[]) => {
    const response = await server.request('GET', path);
    assert.equal(response.status, 200, `${path}: ${response.text}`);
    assert.doesNotMatch(response.text, SECRET, `${path} carries no gateway alarm text`);
    return pick(response.body).map((alert) => alert.title);
  };

  test('/api/dashboard', async () => {
    const titles = await titlesOn('/api/dashboard', (body) => body.recentAlerts);
    assert.ok(titles.includes('Alarm on door.badge'), titles.join(' | '));
    assert.ok(titles.includes('Lobby lift out of service'), 'a hand-written title is kept');
  });

  test('/api/wallboard (the site)', async () => {
    const titles = await titlesOn('/api/wallboard', (body) => body.alerts.active);
    assert.ok(titles.includes('Alarm on door.badge'), titles.join(' | '));
    assert.ok(titles.includes('Lobby lift out of service'));
  });

  test('/api/wallboard?area=', async () => {
    const titles = await titlesOn('/api/wallboard?area=Lobby', (body) => body.alerts.active);
    assert.deepEqual(titles.sort(), ['Alarm on door.badge', 'Lobby lift out of service']);
  });

  test('no public GET route answers with the text', async () => {
    const routes = server.service.routes.filter((route) => route.access === 'public' && route.method === 'GET' && !route.path.includes(':'));
    assert.ok(routes.length >= 3, routes.map((route) => route.path).join(', '));
    for (const route of routes) {
      if (route.raw?.contentType === 'text/event-stream') {
        // A stream never ends by itself: what it opens with (the wallboard's "something changed" events) is read.
        const answer = await fetch(`${server.url}${route.path}`);
        assert.doesNotMatch(await answerText(answer), SECRET, `${route.path} (${answer.status})`);
        continue;
      }
      const response = await server.request('GET', route.path);
      assert.doesNotMatch(response.text, SECRET, `${route.path} (${response.status})`);
    }
  });
});
