// /api/users/:id/avatar: PNG/JPEG/WebP sniffed from the bytes, 2 MiB to the byte, self-or-admin writes, files under avatars/.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { startTestServer, type TestServer, type TestUser } from '../helpers/server.ts';
import { fileBody, filesUnder, rawRequest, sha256 } from '../helpers/uploads.ts';

const MAX = 2 * 1024 * 1024;
const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
const JPEG = Buffer.from([0xff, 0xd8, 0xff, 0xe0]);
const WEBP = Buffer.concat([Buffer.from('RIFF'), Buffer.from([0x10, 0, 0, 0]), Buffer.from('WEBPVP8 ')]);

/** An image-looking byte string: the magic bytes, then filler up to `size`. */
function image(magic: Buffer, size = 1000): Buffer {
  return Buffer.concat([magic, randomBytes(size - magic.length)]);
}

type AvatarColumns = { storedName: string | null; mimeType: string | null; avatarUrl: string | null };

describe('avatars', () => {
  let server: TestServer;
  let admin: TestUser;

  before(async () => {
    server = await startTestServer();
    admin = await server.createUser({ role: 'admin' });
  });
  after(() => server.close());

  const avatarsDir = () => path.join(server.dataDir, 'avatars');
  const columns = (id: number) =>
    server.service.deps.db.sqlite
      .prepare('SELECT avatar_stored_name AS storedName, avatar_mime_type AS mimeType, avatar_url AS avatarUrl FROM users WHERE id = ?')
      .get(id) as AvatarColumns;

  function put(userId: number, token: string, data: Buffer, filename = 'me.png', contentType = 'image/png') {
    const multipart = fileBody(data, filename, contentType);
    return server.request('PUT', `/api/users/${userId}/avatar`, { token, raw: multipart.body, headers: { 'content-type': multipart.contentType } });
  }

  test('a user sets their own avatar; anyone signed in sees it; the row and the file agree', async () => {
    const owner = await server.createUser();
    const other = await server.createUser();
    const data = image(PNG);
    const set = await put(owner.user.id, owner.accessToken, data);
    assert.equal(set.status, 200, set.text);
    assert.deepEqual(set.body, { avatarUrl: `/api/users/${owner.user.id}/avatar` });

    const row = columns(owner.user.id);
    assert.equal(row.mimeType, 'image/png');
    assert.equal(row.avatarUrl, `/api/users/${owner.user.id}/avatar`);
    assert.match(row.storedName ?? '', /^[a-f0-9]{32}\.png$/);
    assert.ok(fs.readFileSync(path.join(avatarsDir(), row.storedName!)).equals(data));

    const seen = await rawRequest(server.url, 'GET', `/api/users/${owner.user.id}/avatar`, { headers: { authorization: `Bearer ${other.accessToken}` } });
    assert.equal(seen.status, 200);
    assert.equal(seen.headers['content-type'], 'image/png');
    assert.equal(seen.headers['x-content-type-options'], 'nosniff');
    assert.equal(seen.headers['content-length'], String(data.length));
    assert.ok(seen.headers.etag);
    assert.equal(sha256(seen.body), sha256(data));
    assert.equal((await rawRequest(server.url, 'GET', `/api/users/${owner.user.id}/avatar`)).status, 401);
    const cached = await rawRequest(server.url, 'GET', `/api/users/${owner.user.id}/avatar`, {
      headers: { authorization: `Bearer ${other.accessToken}`, 'if-none-match': String(seen.headers.etag) },
    });
    assert.equal(cached.status, 304);
  });

  test('the type comes from the bytes: JPEG and WebP recognised whatever the claim; HTML, SVG and GIF refused with 415', async () => {
    const user = await server.createUser();
    const jpeg = await put(user.user.id, user.accessToken, image(JPEG), 'photo.png', 'image/png');
    assert.equal(jpeg.status, 200);
    assert.equal(columns(user.user.id).mimeType, 'image/jpeg');
    assert.match(columns(user.user.id).storedName ?? '', /\.jpg$/);
    const webp = await put(user.user.id, user.accessToken, image(WEBP), 'photo.jpg', 'image/jpeg');
    assert.equal(webp.status, 200);
    assert.equal(columns(user.user.id).mimeType, 'image/webp');
    const served = await rawRequest(server.url, 'GET', `/api/users/${user.user.id}/avatar`, { headers: { authorization: `Bearer ${user.accessToken}` } });
    assert.equal(served.headers['content-type'], 'image/webp');
    assert.equal(filesUnder(avatarsDir()).filter((name) => name === columns(user.user.id).storedName).length, 1);

    const before = columns(user.user.id);
    const refused: Array<[Buffer, string, string]> = [
      [Buffer.from('<html><script>alert(1)</script></html>'), 'x.png', 'image/png'],
      [Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"/>'), 'x.svg', 'image/svg+xml'],
      [Buffer.from('GIF89a............'), 'x.gif', 'image/gif'],
      [Buffer.from('RIFF....AVI LIST'), 'x.webp', 'image/webp'],
      [Buffer.from([0x89, 0x50]), 'short.png', 'image/png'],
    ];
    for (const [data, name, type] of refused) {
      const response = await put(user.user.id, user.accessToken, data, name, type);
      assert.equal(response.status, 415, name);
      assert.match(response.body.error, /PNG, JPEG or WebP/);
    }
    assert.deepEqual(columns(user.user.id), before, 'a refused upload leaves the avatar as it was');
    assert.deepEqual(filesUnder(path.join(server.dataDir, 'tmp')), []);
  });

  test('exactly 2 MiB is accepted; 2 MiB + 1 is 413 with no leftovers', async () => {
    const user = await server.createUser();
    const exact = image(PNG, MAX);
    const accepted = await put(user.user.id, user.accessToken, exact);
    assert.equal(accepted.status, 200);
    const stored = columns(user.user.id).storedName!;
    assert.equal(fs.statSync(path.join(avatarsDir(), stored)).size, MAX);

    const over = await put(user.user.id, user.accessToken, image(PNG, MAX + 1));
    assert.equal(over.status, 413);
    assert.equal(over.body.error, `The file is larger than the limit of ${MAX} bytes`);
    assert.equal(columns(user.user.id).storedName, stored);
    assert.deepEqual(filesUnder(path.join(server.dataDir, 'tmp')), []);
    assert.ok(fs.existsSync(path.join(avatarsDir(), stored)));
  });

  test('replacing removes the old file; only the user or an admin may change or delete it', async () => {
    const owner = await server.createUser();
    const other = await server.createUser({ role: 'operator' });
    assert.equal((await put(owner.user.id, owner.accessToken, image(PNG))).status, 200);
    const first = columns(owner.user.id).storedName!;

    assert.equal((await put(owner.user.id, other.accessToken, image(PNG))).status, 403, 'an operator is not an admin');
    assert.equal((await server.request('DELETE', `/api/users/${owner.user.id}/avatar`, { token: other.accessToken })).status, 403);
    assert.equal(columns(owner.user.id).storedName, first);

    assert.equal((await put(owner.user.id, admin.accessToken, image(JPEG))).status, 200, 'an admin may');
    const second = columns(owner.user.id).storedName!;
    assert.notEqual(second, first);
    assert.equal(fs.existsSync(path.join(avatarsDir(), first)), false, 'the replaced file is gone');
    assert.ok(fs.existsSync(path.join(avatarsDir(), second)));

    const audit = server.service.deps.db.sqlite
      .prepare("SELECT action, user_id AS userId FROM audit_log WHERE resource = 'users' AND resource_id = ? AND action LIKE 'avatar.%' ORDER BY id")
      .all(String(owner.user.id));
    assert.deepEqual(audit, [
      { action: 'avatar.update', userId: owner.user.id },
      { action: 'avatar.update', userId: admin.user.id },
    ]);

    const removed = await server.request('DELETE', `/api/users/${owner.user.id}/avatar`, { token: owner.accessToken });
    assert.equal(removed.status, 204);
    assert.deepEqual(columns(owner.user.id), { storedName: null, mimeType: null, avatarUrl: null });
    assert.equal(fs.existsSync(path.join(avatarsDir(), second)), false);
    assert.equal((await server.request('GET', `/api/users/${owner.user.id}/avatar`, { token: owner.accessToken })).status, 404);
    assert.equal(
      (await server.request('DELETE', `/api/users/${owner.user.id}/avatar`, { token: owner.accessToken })).status,
      204,
      'deleting twice is harmless',
    );
  });

  test('unknown users are 404 and nothing is read or stored for them', async () => {
    const missing = 999_999;
    assert.equal((await put(missing, admin.accessToken, image(PNG))).status, 404);
    assert.equal((await server.request('GET', `/api/users/${missing}/avatar`, { token: admin.accessToken })).status, 404);
    assert.equal((await server.request('DELETE', `/api/users/${missing}/avatar`, { token: admin.accessToken })).status, 404);
    const json = await server.request('PUT', `/api/users/${admin.user.id}/avatar`, { token: admin.accessToken, body: { file: 'x' } });
    assert.equal(json.status, 400);
    assert.deepEqual(filesUnder(path.join(server.dataDir, 'tmp')), []);
  });
});
