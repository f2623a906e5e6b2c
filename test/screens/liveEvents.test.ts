// GET /api/events over real HTTP: signed in only; the current state first, then every change (a raised alert as an
// `alert` and new `alerts` counts); resumable with Last-Event-ID (exactly the missed events, or the state again when
// the id cannot be answered); heartbeats; the end of the stream at the token's expiry; bounded per user under load.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { eventually, startTestServer, type TestServer, type TestUser } from '../helpers/server.ts';

type LiveEvent = { id?: string; event: string; data: unknown; comment?: string };

/** An open stream read as it comes: events and comments in order, its status, and a way to close it. */
type OpenStream = { status: number; headers: Headers; events: LiveEvent[]; ended: Promise<void>; close(): void; text?: string };

async function openStream(server: TestServer, token: string, headers: Record<string, string> = {}, query = '', path = '/api/events'): Promise<OpenStream> {
  const controller = new AbortController();
  const response = await fetch(`${server.url}${path}${query}`, {
    headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...headers },
    signal: controller.signal,
  });
  const events: LiveEvent[] = [];
  if (response.status !== 200) {
    return { status: response.status, headers: response.headers, events, ended: Promise.resolve(), close() {}, text: await response.text() };
  }
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  const ended = (async () => {
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        buffer += value;
        let cut = buffer.indexOf('\n\n');
        while (cut !== -1) {
          const block = buffer.slice(0, cut);
          buffer = buffer.slice(cut + 2);
          const event: LiveEvent = { event: 'message', data: undefined };
          for (const line of block.split('\n')) {
            if (line.startsWith(':')) event.comment = line.slice(1).trim();
            else if (line.startsWith('id: ')) event.id = line.slice(4);
            else if (line.startsWith('event: ')) event.event = line.slice(7);
            else if (line.startsWith('data: ')) event.data = JSON.parse(line.slice(6));
          }
          if (event.comment !== undefined || event.data !== undefined) events.push(event);
          cut = buffer.indexOf('\n\n');
        }
      }
    } catch {
      // aborted by the test
    }
  })();
  return { status: 200, headers: response.headers, events, ended, close: () => controller.abort() };
}

async function openPublic(server: TestServer): Promise<OpenStream> {
  return openStream(server, '', {}, '', '/api/wallboard/events');
}

const waitFor = (stream: OpenStream, what: string, match: (event: LiveEvent) => boolean) => eventually(async () => stream.events.find(match), what, 20_000);

describe('the wallboard stream (public)', () => {
  let server: TestServer;
  let operator: TestUser;
  before(async () => {
    server = await startTestServer({ EMS_EVENTS_HEARTBEAT: '1s' });
    operator = await server.createUser({ role: 'operator' });
  });
  after(() => server?.close());

  test('no token needed; says only that the alerts changed, never what; 4 per address, the 5th opened at once is 429', async () => {
    const opened = await Promise.all(Array.from({ length: 5 }, () => openPublic(server)));
    try {
      const ok = opened.filter((s) => s.status === 200);
      assert.equal(ok.length, 4);
      const refused = opened.find((s) => s.status === 429)!;
      assert.match(JSON.parse(refused.text!).error, /At most 4 wallboard streams per address/);
      const stream = ok[0]!;
      const hello = await waitFor(stream, 'hello', (e) => e.event === 'hello');
      assert.deepEqual(stream.events.indexOf(hello), 0, 'no state before hello: the page asks GET /api/wallboard for it');
      const created = await server.request('POST', '/api/alerts', {
        token: operator.accessToken,
        body: { title: 'Secret room 7 intruder', level: 'critical' },
      });
      assert.equal(created.status, 201);
      const changed = await waitFor(stream, 'changed', (e) => e.event === 'changed');
      assert.deepEqual(changed.data, { kind: 'alerts' });
      await waitFor(stream, 'a heartbeat', (e) => e.comment === 'heartbeat');
      assert.ok(
        !stream.events.some((e) => e.event === 'alert' || e.event === 'jobs' || JSON.stringify(e.data ?? '').includes('Secret')),
        'nothing of what changed',
      );
    } finally {
      for (const s of opened) s.close();
    }
  });
});

describe('the live stream', () => {
  let server: TestServer;
  let operator: TestUser;
  before(async () => {
    server = await startTestServer({ EMS_EVENTS_HEARTBEAT: '1s', EMS_EVENTS_PER_USER: '3' });
    operator = await server.createUser({ role: 'operator' });
  });
  after(() => server?.close());

  test('without a token: 401, nothing streamed', async () => {
    const response = await fetch(`${server.url}/api/events`);
    assert.equal(response.status, 401);
    assert.equal((await response.json()).code, 'UNAUTHENTICATED');
  });

  test('opens with the state of every kind, then a raised alert arrives as `alert` and new counts', async () => {
    const stream = await openStream(server, operator.accessToken);
    try {
      assert.equal(stream.status, 200);
      assert.match(stream.headers.get('content-type')!, /^text\/event-stream/);
      const hello = await waitFor(stream, 'hello', (e) => e.event === 'hello');
      assert.deepEqual(hello.data, { reset: true, heartbeatMs: 1000 });
      const kinds = stream.events.slice(0, stream.events.indexOf(hello)).map((e) => e.event);
      assert.deepEqual(kinds, ['power', 'interval', 'alerts', 'jobs'], 'the current state before hello');
      const before = (await server.request('GET', '/api/alerts/counts', { token: operator.accessToken })).body;
      assert.deepEqual(stream.events.find((e) => e.event === 'alerts')!.data, before, 'the counts are GET /api/alerts/counts');

      const created = await server.request('POST', '/api/alerts', {
        token: operator.accessToken,
        body: { title: 'Boiler 2 flame failure', level: 'critical', area: 'Plant room' },
      });
      assert.equal(created.status, 201, created.text);
      const raised = await waitFor(stream, 'the raised alert', (e) => e.event === 'alert');
      assert.deepEqual(raised.data, {
        id: created.body.id,
        level: 'critical',
        title: 'Boiler 2 flame failure',
        area: 'Plant room',
        occurredAt: created.body.occurredAt,
      });
      const counts = await waitFor(stream, 'the new counts', (e) => e.event === 'alerts' && (e.data as { active: number }).active === before.active + 1);
      assert.equal((counts.data as { critical: number }).critical, before.critical + 1);
      assert.match(raised.id!, /^[0-9a-z]+-\d+$/);
    } finally {
      stream.close();
    }
  });

  test('a heartbeat comment comes when nothing changes', async () => {
    const stream = await openStream(server, operator.accessToken);
    try {
      await waitFor(stream, 'a heartbeat', (e) => e.comment === 'heartbeat');
    } finally {
      stream.close();
    }
  });

  test('Last-Event-ID: exactly the missed events, then hello reset false; an unknown id gets the state again', async () => {
    const first = await openStream(server, operator.accessToken);
    const hello = await waitFor(first, 'hello', (e) => e.event === 'hello');
    first.close();
    await first.ended;
    // Two alerts while the tab was away.
    const titles = ['Missed one', 'Missed two'];
    for (const title of titles)
      assert.equal((await server.request('POST', '/api/alerts', { token: operator.accessToken, body: { title, level: 'warning' } })).status, 201);

    const resumed = await openStream(server, operator.accessToken, { 'Last-Event-ID': hello.id! });
    try {
      const again = await waitFor(resumed, 'hello', (e) => e.event === 'hello');
      assert.deepEqual(again.data, { reset: false, heartbeatMs: 1000 });
      const replayed = resumed.events.slice(0, resumed.events.indexOf(again));
      assert.deepEqual(
        replayed.filter((e) => e.event === 'alert').map((e) => (e.data as { title: string }).title),
        titles,
      );
      assert.ok(
        replayed.some((e) => e.event === 'alerts'),
        'the new counts too',
      );
      assert.ok(!replayed.some((e) => e.event === 'power' || e.event === 'jobs'), 'nothing that did not change');
      // Ids only grow.
      const numbers = [hello, ...replayed, again].map((e) => Number(e.id!.split('-')[1]));
      assert.deepEqual(
        numbers,
        [...numbers].sort((a, b) => a - b),
      );
    } finally {
      resumed.close();
    }

    // The same through the query (a client that cannot set headers), and an id from another boot.
    const viaQuery = await openStream(server, operator.accessToken, {}, `?lastEventId=${hello.id}`);
    const helloQuery = await waitFor(viaQuery, 'hello', (e) => e.event === 'hello');
    assert.deepEqual(helloQuery.data, { reset: false, heartbeatMs: 1000 });
    viaQuery.close();
    const stranger = await openStream(server, operator.accessToken, { 'Last-Event-ID': 'zzz-5' });
    const reset = await waitFor(stranger, 'hello', (e) => e.event === 'hello');
    assert.deepEqual(reset.data, { reset: true, heartbeatMs: 1000 });
    assert.deepEqual(
      stranger.events.slice(0, stranger.events.indexOf(reset)).map((e) => e.event),
      ['power', 'interval', 'alerts', 'jobs'],
    );
    stranger.close();

    const bad = await openStream(server, operator.accessToken, {}, '?lastEventId=%3Cscript%3E');
    assert.equal(bad.status, 400);
    assert.match(bad.text!, /lastEventId/);
  });

  test(`at most EMS_EVENTS_PER_USER streams per user, under 12 opened at once; another user is not affected; a closed one frees its place`, async () => {
    const crowd = await server.createUser({ role: 'viewer', username: 'crowd' });
    const opened = await Promise.all(Array.from({ length: 12 }, () => openStream(server, crowd.accessToken)));
    try {
      const ok = opened.filter((s) => s.status === 200);
      const refused = opened.filter((s) => s.status === 429);
      assert.equal(ok.length, 3, 'exactly the bound');
      assert.equal(refused.length, 9);
      for (const s of refused) {
        assert.equal(JSON.parse(s.text!).code, 'RATE_LIMITED');
        assert.ok(Number(s.headers.get('retry-after')) >= 1);
        assert.match(JSON.parse(s.text!).error, /At most 3 live streams per user/);
      }
      assert.equal(server.service.deps.live.open({ userId: crowd.user.id }), 3);
      const other = await openStream(server, operator.accessToken);
      assert.equal(other.status, 200, "another user's tab opens");
      other.close();

      ok[0]!.close();
      await eventually(async () => server.service.deps.live.open({ userId: crowd.user.id }) === 2 || undefined, 'the closed stream let go', 20_000);
      const next = await openStream(server, crowd.accessToken);
      assert.equal(next.status, 200);
      next.close();
    } finally {
      for (const s of opened) s.close();
    }
  });
});

test('the stream ends when its access token expires', async () => {
  const server = await startTestServer({ EMS_ACCESS_TOKEN_TTL: '3s' });
  try {
    const user = await server.createUser({ role: 'viewer' });
    const stream = await openStream(server, user.accessToken);
    assert.equal(stream.status, 200);
    const endedAt = await Promise.race([stream.ended.then(() => Date.now()), new Promise<number>((resolve) => setTimeout(() => resolve(0), 30_000))]);
    assert.ok(endedAt > 0, 'ended within 30 s of a 3 s token');
    assert.equal(server.service.deps.live.open({ userId: user.user.id }), 0);
  } finally {
    await server.close();
  }
});
