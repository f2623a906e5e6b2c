// The verified-token cache in SigningKeys: a remembered token still expires, dies with a rotated secret, and only
// the byte-identical token hits it. Also: the request log line keeps its fields without the redaction pass.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, describe, test } from 'node:test';
import jwt from 'jsonwebtoken';
import { rotateStoredSecret, SigningKeys } from '../src/auth/signingKeys.ts';
import { closeDatabase, databasePath, openDatabase } from '../src/db/client.ts';
import { startTestServer, tempDir } from './helpers/server.ts';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function keysOn(ttlSec: number) {
  const dir = tempDir('ems-keys-');
  const db = openDatabase(databasePath(dir));
  after(() => {
    closeDatabase(db);
    fs.rmSync(dir, { recursive: true, force: true });
  });
  return { db, keys: new SigningKeys(db, undefined, ttlSec) };
}

describe('SigningKeys verify cache', () => {
  test('a token verified once is still refused once it expires', async () => {
    const { keys } = keysOn(1);
    const token = keys.sign({ userId: 7, username: 'cached' });
    assert.deepEqual(keys.verify(token), { userId: 7, username: 'cached' });
    assert.deepEqual(keys.verify(token), { userId: 7, username: 'cached' });
    await sleep(2100);
    assert.equal(keys.verify(token), null);
  });

  test('a rotated secret refuses tokens verified under the old one', async () => {
    const { db, keys } = keysOn(900);
    const token = keys.sign({ userId: 1, username: 'before' });
    assert.ok(keys.verify(token));
    rotateStoredSecret(db);
    await sleep(600);
    assert.equal(keys.verify(token), null);
    assert.ok(keys.verify(keys.sign({ userId: 1, username: 'after' })));
  });

  test('a cached token does not vouch for an altered or re-signed copy', () => {
    const { keys } = keysOn(900);
    const token = keys.sign({ userId: 2, username: 'viewer' });
    assert.ok(keys.verify(token));
    const [header, payload, signature] = token.split('.');
    const forgedPayload = Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(payload, 'base64url').toString()), userId: 1 })).toString('base64url');
    assert.equal(keys.verify(`${header}.${forgedPayload}.${signature}`), null);
    assert.equal(keys.verify(`${token}x`), null);
    assert.equal(keys.verify(jwt.sign({ userId: 2, username: 'viewer' }, 'another secret of at least 32 bytes!!', { algorithm: 'HS256', expiresIn: 900 })), null);
    assert.ok(keys.verify(token));
  });
});

describe('request log', () => {
  test('one line per request with its fields, written without the redaction pass', async () => {
    const server = await startTestServer();
    after(() => server.close());
    const { accessToken, user } = await server.createUser();
    assert.equal((await server.request('GET', '/api/auth/me?x=1', { token: accessToken })).status, 200);
    const line = server.logs.map((text) => JSON.parse(text)).find((entry) => entry.msg === 'request' && entry.path === '/api/auth/me');
    assert.ok(line, 'no request line for /api/auth/me');
    assert.equal(line.method, 'GET');
    assert.equal(line.route, '/api/auth/me');
    assert.equal(line.status, 200);
    assert.equal(line.userId, user.id);
    assert.equal(typeof line.reqId, 'string');
    assert.equal(typeof line.durationMs, 'number');
    assert.ok(!JSON.stringify(line).includes(accessToken));
  });
});
