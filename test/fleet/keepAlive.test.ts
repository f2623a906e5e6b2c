// A box keeps one connection to its fleet between sends (issue 55: most of a live sync's cost was a fresh TLS
// connection per request): the box's dispatcher (src/fleetSync/sync.ts fleetDispatcher) keeps it idle for longer than
// the sync interval, and so does the fleet's listener (listenFleet; it was 10 s, so every 5-minute send made a new
// one). Two sends 4.5 s apart (longer than fetch's own default of 4 s) reuse one connection; with the listener's idle
// limit shorter than the gap between sends (as 10 s was against 5 minutes), they need two.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import Koa from 'koa';
import { FLEET_KEEP_ALIVE_MS, listenFleet } from '../../src/fleet/app.ts';
import { BOX_KEEP_ALIVE_MS, fleetDispatcher } from '../../src/fleetSync/sync.ts';

const SYNC_INTERVAL_MS = 5 * 60_000;

test('the box reuses one connection across sends; the fleet keeps it open longer than the sync interval', { timeout: 60_000 }, async () => {
  assert.ok(BOX_KEEP_ALIVE_MS > SYNC_INTERVAL_MS && FLEET_KEEP_ALIVE_MS > SYNC_INTERVAL_MS);
  const app = new Koa();
  app.use((ctx) => {
    ctx.body = { ok: true };
  });
  const { server, url } = await listenFleet(app, { host: '127.0.0.1', port: 0, tls: null });
  let connections = 0;
  server.on('connection', () => connections++);
  const dispatcher = await fleetDispatcher();
  try {
    assert.equal(server.keepAliveTimeout, FLEET_KEEP_ALIVE_MS);
    const twoSends = async (init: RequestInit) => {
      for (let i = 0; i < 2; i++) {
        if (i > 0) await new Promise((resolve) => setTimeout(resolve, 4_500));
        const response = await fetch(`${url}/api/fleet/ingest`, { method: 'POST', body: '{}', ...init });
        assert.equal(response.status, 200);
        await response.text();
      }
    };
    await twoSends({ dispatcher } as RequestInit);
    assert.equal(connections, 1, 'two sends over one connection with the box dispatcher');
    connections = 0;
    server.keepAliveTimeout = 3_000;
    const second = await fleetDispatcher();
    try {
      await twoSends({ dispatcher: second } as RequestInit);
    } finally {
      await second.close();
    }
    assert.equal(connections, 2, 'a listener that closes idle connections sooner than the next send costs a new one');
  } finally {
    await dispatcher.close();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});
