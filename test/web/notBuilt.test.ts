// A checkout whose staff app was never built answers a browser with a 503 that says how to build it: the site box
// points to the wallboard (it works without the build), the fleet does not (it has no wallboard). API paths fall through.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import Koa from 'koa';
import { fleetStaffApp, staffApp } from '../../src/web/index.ts';

const empty = fs.mkdtempSync(path.join(os.tmpdir(), 'ems-web-unbuilt-'));
after(() => fs.rmSync(empty, { recursive: true, force: true }));

async function get(middleware: Koa.Middleware, url: string): Promise<{ status: number; text: string }> {
  const app = new Koa();
  app.use(middleware);
  app.use((ctx) => {
    ctx.body = { fellThrough: true };
  });
  const server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  try {
    const answer = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}${url}`, { headers: { accept: 'text/html' } });
    return { status: answer.status, text: await answer.text() };
  } finally {
    server.close();
  }
}

test('the site box: 503 naming the build command and the wallboard; /api falls through', async () => {
  const box = staffApp({ configs: { platform: () => ({ language: 'en', timezone: 'UTC', siteName: 'Test', currency: 'EUR' }) as never } }, empty);
  const page = await get(box, '/alerts');
  assert.equal(page.status, 503);
  assert.match(page.text, /npm run build:web/);
  assert.match(page.text, /wallboard is at \/wallboard/);
  assert.deepEqual(JSON.parse((await get(box, '/api/health')).text), { fellThrough: true });
});

test('the fleet: 503 naming the build command, no wallboard', async () => {
  const page = await get(fleetStaffApp(empty), '/');
  assert.equal(page.status, 503);
  assert.match(page.text, /npm run build:web/);
  assert.doesNotMatch(page.text, /wallboard/);
});
