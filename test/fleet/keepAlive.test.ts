// A box keeps one connection to its fleet between sends (issue 55: most of a live sync's cost was a fresh TLS
// connection per request): the box's dispatcher (src/fleetSync/sync.ts fleetDispatcher) keeps it idle for longer than
// the sync interval, and so does the fleet's listener (listenFleet; it was 10 s, so every 5-minute send made a new
// one). Two sends 4.5 s apart (longer than fetch's own default of 4 s) reuse one connection; with the listener's idle
// limit shorter than the gap between sends (as 10 s was against 5 minutes), they need two.
import assert from 'node:assert/strict';
import type { Server } from 'node:http';
import { test } from 'node:test';
import Koa from 'koa';
import { FLEET_KEEP_ALIVE_MS, listenFleet } from '../../src/fleet/app.ts';
import { BOX_KEEP_ALIVE_MS, fleetDispatcher } from '../../src/fleetSync/sync.ts';

const SYNC_INTERVAL_MS = 5 * 60_000;

/** A fleet listener that counts the connections made to it. */
async function countingFleet(): Promise<{ server: Server; url: string; connections: () => number }> {
  const app = new Koa();
  app.use((ctx) => {
    ctx.body = { ok: true };
  });
  const { server, url } = await listenFleet(app, { host: '127.0.0.1', port: 0, tls: null });
  let connections = 0;
  server.on('connection', () => connections++);
  return { server, url, connections: () => connections };
}

/** Two sends through a box dispatcher, 4.5 s apart (longer than fetch's own default of 4 s). */
async function twoSends(url: string): Promise<void> {
  const dispatcher = await fleetDispatcher();
  try {
    for (let i = 0; i < 2; i++) {
      if (i > 0) await new Promise((resolve) => setTimeout(resolve, 4_500));
      const response = await fetch(`${url}/api/fleet/ingest`, { method: 'POST', body: '{}', dispatcher } as RequestInit);
      assert.equal(response.status, 200);
      await response.text();
    }
  } finally {
    await dispatcher.close();
  }
}

// The two cases on listeners of their own at the same time (one 4.5-s gap of the run's wall time, not two).
test('the box reuses one connection across sends; the fleet keeps it open longer than the sync interval', { timeout: 60_000 }, async () => {
  assert.ok(BOX_KEEP_ALIVE_MS > SYNC_INTERVAL_MS && FLEET_KEEP_ALIVE_MS > SYNC_INTERVAL_MS);
  const fleet = await countingFleet();
  const shorter = await countingFleet();
  try {
    assert.equal(fleet.server.keepAliveTimeout, FLEET_KEEP_ALIVE_MS);
    shorter.server.keepAliveTimeout = 3_000;
    await Promise.all([twoSends(fleet.url), twoSends(shorter.url)]);
    assert.equal(fleet.connections(), 1, 'two sends over one connection with the box dispatcher');
    assert.equal(shorter.connections(), 2, 'a listener that closes idle connections sooner than the next send costs a new one');
  } finally {
    for (const { server } of [fleet, shorter]) {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  }
});
