// /api/files: real bytes up and down, the size limit to the byte (small and the real 100 MiB default), aborted
// uploads, hostile names, Range, HTML/SVG never served as HTML, roles, malformed multipart bodies.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { startTestServer, tempDir, type TestServer, type TestUser } from '../helpers/server.ts';
import { fileBody, filesUnder, hashDownload, multipartBody, rawRequest, sha256, streamUpload, waitFor } from '../helpers/uploads.ts';

const LIMIT = 4096;
const MiB = 1024 * 1024;

function rowCount(server: TestServer): number {
  return server.service.deps.db.sqlite.prepare('SELECT count(*) FROM files').pluck().get() as number;
}

function post(server: TestServer, token: string, multipart: { body: Buffer; contentType: string }, pathname = '/api/files') {
  return server.request('POST', pathname, { token, raw: multipart.body, headers: { 'content-type': multipart.contentType } });
}

function assertNoLeftovers(server: TestServer, rows = 0): void {
  assert.deepEqual(filesUnder(path.join(server.dataDir, 'tmp')), [], 'tmp/ is empty');
  assert.equal(filesUnder(path.join(server.dataDir, 'uploads')).length, rows, 'uploads/ holds one file per row');
  assert.equal(rowCount(server), rows);
}

describe('files with a small EMS_UPLOAD_MAX_BYTES', () => {
  let server: TestServer;
  let operator: TestUser;
  let viewer: TestUser;

  // The data dir sits alone in a parent of its own, so a write that escaped it would show up there.
  let parent: string;

  before(async () => {
    parent = tempDir('ems-files-');
    server = await startTestServer({ EMS_UPLOAD_MAX_BYTES: String(LIMIT), EMS_DATA_DIR: path.join(parent, 'data') });
    operator = await server.createUser({ role: 'operator' });
    viewer = await server.createUser({ role: 'viewer' });
  });
  after(async () => {
    await server.close();
    fs.rmSync(parent, { recursive: true, force: true });
  });

  async function upload(data: Buffer | string, filename = 'report.pdf', contentType: string | null = 'application/pdf') {
    const response = await post(server, operator.accessToken, fileBody(data, filename, contentType));
    assert.equal(response.status, 201, response.text);
    return response.body;
  }

  test('upload, metadata, download byte for byte, list, delete', async () => {
    const data = randomBytes(3000);
    const created = await upload(data, 'meter readings.pdf');
    assert.equal(created.originalName, 'meter readings.pdf');
    assert.equal(created.mimeType, 'application/pdf');
    assert.equal(created.size, 3000);
    assert.equal(created.sha256, sha256(data));
    assert.equal(created.uploadedBy, operator.user.id);
    assert.match(created.storedName, /^[a-f0-9]{32}$/);
    assert.equal(created.downloadUrl, `/api/files/${created.id}/raw`);
    assert.ok(fs.existsSync(path.join(server.dataDir, 'uploads', created.storedName)));

    const meta = await server.request('GET', `/api/files/${created.id}`, { token: viewer.accessToken });
    assert.equal(meta.status, 200);
    assert.deepEqual(meta.body, created);

    const raw = await fetch(`${server.url}/api/files/${created.id}/raw`, { headers: { authorization: `Bearer ${viewer.accessToken}` } });
    assert.equal(raw.status, 200);
    const bytes = Buffer.from(await raw.arrayBuffer());
    assert.ok(bytes.equals(data), 'downloaded bytes equal the uploaded ones');
    assert.equal(sha256(bytes), created.sha256);
    assert.equal(raw.headers.get('content-type'), 'application/pdf');
    assert.equal(raw.headers.get('content-length'), '3000');
    assert.equal(raw.headers.get('content-disposition'), `attachment; filename="meter readings.pdf"; filename*=UTF-8''meter%20readings.pdf`);
    assert.equal(raw.headers.get('x-content-type-options'), 'nosniff');
    assert.equal(raw.headers.get('etag'), `"${created.sha256}"`);
    assert.equal(raw.headers.get('accept-ranges'), 'bytes');

    const second = await upload('second', 'b.txt', 'text/plain');
    const list = await server.request('GET', '/api/files?pageSize=1', { token: viewer.accessToken });
    assert.equal(list.status, 200);
    assert.equal(list.body.page, 1);
    assert.equal(list.body.pageSize, 1);
    assert.ok(list.body.total >= 2);
    assert.equal(list.body.items.length, 1);
    assert.equal(list.body.items[0].id, second.id, 'newest first');
    const found = await server.request('GET', `/api/files?q=${encodeURIComponent('readings')}`, { token: viewer.accessToken });
    assert.deepEqual(
      found.body.items.map((item: { id: number }) => item.id),
      [created.id],
    );

    const removed = await server.request('DELETE', `/api/files/${created.id}`, { token: operator.accessToken });
    assert.equal(removed.status, 204);
    assert.equal(fs.existsSync(path.join(server.dataDir, 'uploads', created.storedName)), false, 'bytes removed with the row');
    assert.equal((await server.request('GET', `/api/files/${created.id}`, { token: viewer.accessToken })).status, 404);
    assert.equal((await server.request('GET', `/api/files/${created.id}/raw`, { token: viewer.accessToken })).status, 404);
    assert.equal((await server.request('DELETE', `/api/files/${created.id}`, { token: operator.accessToken })).status, 404);
    await server.request('DELETE', `/api/files/${second.id}`, { token: operator.accessToken });

    const audit = server.service.deps.db.sqlite
      .prepare("SELECT action FROM audit_log WHERE resource = 'files' AND resource_id = ? ORDER BY id")
      .pluck()
      .all(String(created.id));
    assert.deepEqual(audit, ['upload', 'delete']);
  });

  test('roles: viewer reads but cannot upload or delete; no token is 401', async () => {
    const created = await upload('readable by viewers', 'note.txt', 'text/plain');
    const body = fileBody('nope');
    assert.equal((await post(server, viewer.accessToken, body)).status, 403);
    assert.equal((await server.request('POST', '/api/files', { raw: body.body, headers: { 'content-type': body.contentType } })).status, 401);
    assert.equal((await server.request('GET', '/api/files')).status, 401);
    assert.equal((await server.request('GET', `/api/files/${created.id}/raw`)).status, 401);
    assert.equal((await server.request('DELETE', `/api/files/${created.id}`, { token: viewer.accessToken })).status, 403);
    assert.equal((await server.request('GET', `/api/files/${created.id}/raw`, { token: viewer.accessToken })).text, 'readable by viewers');
    await server.request('DELETE', `/api/files/${created.id}`, { token: operator.accessToken });
    assert.deepEqual(filesUnder(path.join(server.dataDir, 'tmp')), []);
  });

  test('exactly the limit is accepted; one byte more is 413 and leaves no file and no row', async () => {
    const rowsBefore = rowCount(server);
    const exact = randomBytes(LIMIT);
    const created = await upload(exact, 'exact.bin', 'application/octet-stream');
    assert.equal(created.size, LIMIT);
    assert.equal(created.sha256, sha256(exact));

    const over = await post(server, operator.accessToken, fileBody(randomBytes(LIMIT + 1), 'over.bin'));
    assert.equal(over.status, 413);
    assert.equal(over.body.error, `The file is larger than the limit of ${LIMIT} bytes`);
    assert.equal(rowCount(server), rowsBefore + 1);
    assert.deepEqual(filesUnder(path.join(server.dataDir, 'tmp')), []);
    assert.deepEqual(filesUnder(path.join(server.dataDir, 'uploads')), [created.storedName]);

    // Declared far over the limit: refused before the body is read.
    const huge = await post(server, operator.accessToken, fileBody(randomBytes(LIMIT + 70 * 1024)));
    assert.equal(huge.status, 413);
    await server.request('DELETE', `/api/files/${created.id}`, { token: operator.accessToken });
    assertNoLeftovers(server);
  });

  test('malformed or unexpected bodies are 400 and leave nothing behind', async () => {
    const token = operator.accessToken;
    const json = await server.request('POST', '/api/files', { token, body: { file: 'x' } });
    assert.equal(json.status, 400);
    assert.match(json.body.error, /multipart\/form-data/);
    const octets = await server.request('POST', '/api/files', { token, raw: 'abc', headers: { 'content-type': 'application/octet-stream' } });
    assert.equal(octets.status, 400);
    const noBoundary = await server.request('POST', '/api/files', { token, raw: 'abc', headers: { 'content-type': 'multipart/form-data' } });
    assert.equal(noBoundary.status, 400);

    const cases: Array<[string, { body: Buffer; contentType: string }, RegExp]> = [
      ['no file part', multipartBody([{ name: 'comment', data: 'hello' }]), /No file in field "file"/],
      ['wrong field', multipartBody([{ name: 'upload', filename: 'a.txt', contentType: 'text/plain', data: 'a' }]), /field "upload"/],
      [
        'two files',
        multipartBody([
          { name: 'file', filename: 'a.txt', contentType: 'text/plain', data: 'a' },
          { name: 'file', filename: 'b.txt', contentType: 'text/plain', data: 'b' },
        ]),
        /One file per request/,
      ],
      ['empty file', fileBody('', 'empty.txt'), /empty/],
      ['too many parts', multipartBody(Array.from({ length: 12 }, (_, i) => ({ name: `f${i}`, data: 'x' }))), /Too many form parts/],
      // A header field value may not hold a NUL: the part header is malformed, so the name never reaches the service.
      ['NUL in a part header', fileBody('payload', 'nul\u0000byte.txt', 'text/plain'), /Malformed multipart body/],
    ];
    for (const [name, multipart, message] of cases) {
      const response = await post(server, token, multipart);
      assert.equal(response.status, 400, `${name}: ${response.text}`);
      assert.match(response.body.error, message, name);
    }
    // Cut off before the closing boundary: the client ended the body, the parser knows it is incomplete.
    const whole = fileBody('truncated content', 't.txt');
    const truncated = await post(server, token, { body: whole.body.subarray(0, whole.body.length - 20), contentType: whole.contentType });
    assert.equal(truncated.status, 400);
    assert.match(truncated.body.error, /Malformed multipart body/);
    // A file part without a Content-Type is still a file (not a text field buffered in memory), of the
    // multipart default type text/plain.
    const untyped = await post(server, token, fileBody('no type given', 'plain', null));
    assert.equal(untyped.status, 201);
    assert.equal(untyped.body.mimeType, 'text/plain');
    await server.request('DELETE', `/api/files/${untyped.body.id}`, { token });
    assertNoLeftovers(server);
  });

  /** A body from raw part sections ("headers CRLF CRLF data"), for shapes the form helpers cannot write. */
  function rawMultipart(sections: string[], boundary = 'ems-raw-boundary') {
    const body = sections.map((section) => `--${boundary}\r\n${section}\r\n`).join('') + `--${boundary}--\r\n`;
    return { body: Buffer.from(body, 'utf8'), contentType: `multipart/form-data; boundary=${boundary}` };
  }
  const filePart = 'Content-Disposition: form-data; name="file"; filename="a.txt"\r\nContent-Type: text/plain\r\n\r\nfile bytes';
  const fieldPart = (name: string, value: string) => `Content-Disposition: form-data; name="${name}"\r\n\r\n${value}`;
  // A part with no Content-Disposition names nothing and is skipped, but it is still a part.
  const anonymousPart = 'Content-Type: text/plain\r\n\r\nignored';

  test('part caps: 8 parts and 6 fields pass, one more of either is 400; fields past 16 KiB in all are 413', async () => {
    const token = operator.accessToken;
    const fields = (count: number) => Array.from({ length: count }, (_, i) => fieldPart(`note${i}`, 'x'));
    const accepted: Array<[string, { body: Buffer; contentType: string }]> = [
      ['8 parts', rawMultipart([filePart, ...fields(6), anonymousPart])],
      ['16 KiB of fields', rawMultipart([filePart, fieldPart('a', 'x'.repeat(10_000)), fieldPart('b', 'y'.repeat(16 * 1024 - 10_000))])],
    ];
    for (const [name, multipart] of accepted) {
      const response = await post(server, token, multipart);
      assert.equal(response.status, 201, `${name}: ${response.text}`);
      assert.equal(response.body.size, 'file bytes'.length, name);
      await server.request('DELETE', `/api/files/${response.body.id}`, { token });
    }
    // The file comes first in each, so it is already on its way to tmp/ when the refusal comes.
    const refused: Array<[string, { body: Buffer; contentType: string }, number, RegExp]> = [
      ['9 parts', rawMultipart([filePart, ...fields(6), anonymousPart, anonymousPart]), 400, /Too many form parts/],
      ['7 fields', rawMultipart([filePart, ...fields(7)]), 400, /Too many form parts/],
      ['one field past 16 KiB', rawMultipart([filePart, fieldPart('a', 'x'.repeat(16 * 1024 + 1))]), 413, /at most 16384 bytes/],
      [
        'fields past 16 KiB in all',
        rawMultipart([filePart, fieldPart('a', 'x'.repeat(10_000)), fieldPart('b', 'y'.repeat(16 * 1024 - 10_000 + 1))]),
        413,
        /at most 16384 bytes/,
      ],
    ];
    for (const [name, multipart, status, message] of refused) {
      const response = await post(server, token, multipart);
      assert.equal(response.status, status, `${name}: ${response.text}`);
      assert.match(response.body.error, message, name);
    }
    assertNoLeftovers(server);
  });

  test('malformed part headers and bodies are 400 and leave nothing behind', async () => {
    const token = operator.accessToken;
    const cases: Array<[string, { body: Buffer; contentType: string }, RegExp]> = [
      ['a header line without a colon', rawMultipart(['Content-Disposition form-data; name="file"; filename="a.txt"\r\n\r\nx']), /Malformed multipart body/],
      ['a file after a broken header', rawMultipart([filePart, 'Content-Type text/plain\r\n\r\nx']), /Malformed multipart body/],
      [
        'no boundary anywhere in the body',
        { body: Buffer.from('just some bytes\r\n'), contentType: 'multipart/form-data; boundary=never-sent' },
        /Malformed multipart body/,
      ],
      ['an empty boundary', { body: Buffer.from('--\r\n'), contentType: 'multipart/form-data; boundary=' }, /Malformed multipart body/],
      ['an unterminated quoted boundary', { body: Buffer.from('--x\r\n'), contentType: 'multipart/form-data; boundary="x' }, /Malformed multipart body/],
      [
        'the body ends inside a part header',
        { body: Buffer.from('--b\r\nContent-Disposition: form-data; na'), contentType: 'multipart/form-data; boundary=b' },
        /Malformed multipart body/,
      ],
      ['only the closing boundary', { body: Buffer.from('--b--\r\n'), contentType: 'multipart/form-data; boundary=b' }, /No file in field "file"/],
      ['field "file" as text, not a file', multipartBody([{ name: 'file', data: 'just text' }]), /No file in field "file"/],
      [
        'a file part without a field name',
        rawMultipart(['Content-Disposition: form-data; filename="a.txt"\r\n\r\nx']),
        /Unexpected file in field "": send it in field "file"/,
      ],
      ['a part that is not form-data', rawMultipart(['Content-Disposition: attachment; name="file"; filename="a.txt"\r\n\r\nx']), /No file in field "file"/],
    ];
    for (const [name, multipart, message] of cases) {
      const response = await post(server, token, multipart);
      assert.equal(response.status, 400, `${name}: ${response.text}`);
      assert.match(response.body.error, message, name);
    }
    assertNoLeftovers(server);
  });

  test('names: raw UTF-8, RFC 5987 filename*, and character references are read as the client meant', async () => {
    const token = operator.accessToken;
    const cases: Array<[string, string]> = [
      ['filename="Zählerstand März.pdf"', 'Zählerstand März.pdf'],
      [`filename="fallback.txt"; filename*=UTF-8''%E2%82%AC%20tariff.txt`, '€ tariff.txt'],
      ['filename="&#26085;&#26412;.txt"', '日本.txt'],
      ['filename="C:\\fakepath\\plan.pdf"', 'plan.pdf'],
    ];
    for (const [parameters, expected] of cases) {
      const response = await post(
        server,
        token,
        rawMultipart([`Content-Disposition: form-data; name="file"; ${parameters}\r\nContent-Type: text/plain\r\n\r\nnamed`]),
      );
      assert.equal(response.status, 201, `${parameters}: ${response.text}`);
      assert.equal(response.body.originalName, expected, parameters);
      await server.request('DELETE', `/api/files/${response.body.id}`, { token });
    }
    assertNoLeftovers(server);
  });

  test('hostile names stay data: generated names on disk, clean names in headers', async () => {
    const hostile: Array<[string, string]> = [
      ['../../x', 'x'],
      ['..\\..\\windows\\evil.txt', 'evil.txt'],
      ['/etc/passwd', 'passwd'],
      // Browsers write characters their form's charset lacks as "&#NNNN;", read back on receipt: this reaches the
      // service as CR LF.
      ['crlf&#0013;&#0010;Set-Cookie: a=b.txt', 'crlfSet-Cookie: a=b.txt'],
      ['quote%22 and ; semicolon.txt', 'quote" and ; semicolon.txt'],
      ['..', 'file'],
      ['\u202egnp.exe', 'gnp.exe'],
    ];
    const topLevel = new Set(fs.readdirSync(server.dataDir));
    for (const [raw, expected] of hostile) {
      const response = await post(server, operator.accessToken, fileBody('payload', raw, 'text/plain'));
      assert.equal(response.status, 201, `${JSON.stringify(raw)}: ${response.text}`);
      assert.equal(response.body.originalName, expected, JSON.stringify(raw));
      assert.match(response.body.storedName, /^[a-f0-9]{32}$/);
      const download = await rawRequest(server.url, 'GET', `/api/files/${response.body.id}/raw`, {
        headers: { authorization: `Bearer ${operator.accessToken}` },
      });
      assert.equal(download.status, 200);
      const disposition = String(download.headers['content-disposition']);
      assert.match(disposition, /^attachment; filename="[\x20-\x7e]*"; filename\*=UTF-8''[A-Za-z0-9%!._~-]+$/, disposition);
      assert.equal(download.headers['set-cookie'], undefined, 'no header injected');
      assert.equal(download.body.toString(), 'payload');
    }
    const long = 'a'.repeat(300) + '.txt';
    const longUpload = await post(server, operator.accessToken, fileBody('payload', long, 'text/plain'));
    assert.equal(longUpload.status, 201);
    assert.equal(longUpload.body.originalName.length, 255);
    assert.ok(longUpload.body.originalName.endsWith('.txt'), 'the extension survives truncation');

    const stored = filesUnder(path.join(server.dataDir, 'uploads'));
    assert.equal(stored.length, hostile.length + 1);
    for (const name of stored) assert.match(name, /^[a-f0-9]{32}$/);
    assert.deepEqual(fs.readdirSync(parent), ['data'], 'nothing written next to the data dir');
    assert.deepEqual(new Set(fs.readdirSync(server.dataDir)), topLevel, 'nothing new at the top of the data dir');
    for (const { id } of server.service.deps.db.sqlite.prepare('SELECT id FROM files').all() as Array<{ id: number }>) {
      await server.request('DELETE', `/api/files/${id}`, { token: operator.accessToken });
    }
    assertNoLeftovers(server);
  });

  test('Range: single ranges, suffixes, clamping, 416, multi-range and If-Range fall back to the whole file, 304', async () => {
    const data = randomBytes(1000);
    const created = await upload(data, 'ranged.bin', 'application/octet-stream');
    const url = `/api/files/${created.id}/raw`;
    const get = (headers: Record<string, string>) =>
      rawRequest(server.url, 'GET', url, { headers: { authorization: `Bearer ${viewer.accessToken}`, ...headers } });

    const cases: Array<[string, number, number]> = [
      ['bytes=0-99', 0, 99],
      ['bytes=900-', 900, 999],
      ['bytes=-10', 990, 999],
      ['bytes=995-2000', 995, 999],
      ['bytes=999-999', 999, 999],
    ];
    for (const [range, start, end] of cases) {
      const response = await get({ range });
      assert.equal(response.status, 206, range);
      assert.equal(response.headers['content-range'], `bytes ${start}-${end}/1000`, range);
      assert.equal(response.headers['content-length'], String(end - start + 1), range);
      assert.ok(response.body.equals(data.subarray(start, end + 1)), range);
    }
    for (const range of ['bytes=1000-', 'bytes=5000-6000', 'bytes=-0']) {
      const response = await get({ range });
      assert.equal(response.status, 416, range);
      assert.equal(response.headers['content-range'], 'bytes */1000', range);
      assert.equal(response.json.error, 'Range not satisfiable');
    }
    for (const headers of <Array<Record<string, string>>>[
      { range: 'bytes=0-1,5-6' },
      { range: 'bytes=9-3' },
      { range: 'items=0-5' },
      { range: 'bytes=0-9', 'if-range': '"stale-etag"' },
    ]) {
      const response = await get(headers);
      assert.equal(response.status, 200, JSON.stringify(headers));
      assert.ok(response.body.equals(data), JSON.stringify(headers));
    }
    const matching = await get({ range: 'bytes=0-9', 'if-range': `"${created.sha256}"` });
    assert.equal(matching.status, 206);
    const notModified = await get({ 'if-none-match': `"${created.sha256}"` });
    assert.equal(notModified.status, 304);
    assert.equal(notModified.body.length, 0);
    await server.request('DELETE', `/api/files/${created.id}`, { token: operator.accessToken });
  });

  test('HTML and SVG uploads are never served as text/html or image/svg+xml', async () => {
    const pages: Array<[string, string, string]> = [
      ['page.html', 'text/html', '<html><script>alert(document.cookie)</script></html>'],
      ['page.htm', 'text/html; charset=utf-8', '<script>alert(1)</script>'],
      ['logo.svg', 'image/svg+xml', '<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"/>'],
      ['page.xhtml', 'application/xhtml+xml', '<html xmlns="http://www.w3.org/1999/xhtml"><script>alert(1)</script></html>'],
      ['lying.png', 'image/png', '<html><script>alert(1)</script></html>'],
    ];
    for (const [name, type, content] of pages) {
      const created = await upload(content, name, type);
      const download = await rawRequest(server.url, 'GET', `/api/files/${created.id}/raw`, { headers: { authorization: `Bearer ${viewer.accessToken}` } });
      assert.equal(download.status, 200);
      const served = String(download.headers['content-type']);
      assert.doesNotMatch(served, /html|svg|xml/, `${name} served as ${served}`);
      assert.match(String(download.headers['content-disposition']), /^attachment;/);
      assert.equal(download.headers['x-content-type-options'], 'nosniff');
      assert.equal(download.body.toString(), content);
      await server.request('DELETE', `/api/files/${created.id}`, { token: operator.accessToken });
    }
  });

  test('an aborted upload leaves no temp file, no stored file and no row; the server carries on', async () => {
    const tmp = path.join(server.dataDir, 'tmp');
    const result = await streamUpload(server.url, '/api/files', {
      token: operator.accessToken,
      size: LIMIT,
      abortAfter: LIMIT / 2,
      // Abort only once the server is writing the temp file, so the cleanup path is what is tested.
      beforeAbort: () => waitFor(() => filesUnder(tmp).length > 0, 'the server opened its temp file'),
    });
    assert.equal(result.status, 0, 'the client gave up before any answer');
    await waitFor(() => filesUnder(tmp).length === 0, 'temp file removed after the abort');
    assertNoLeftovers(server);
    const next = await post(server, operator.accessToken, fileBody('still works', 'after.txt', 'text/plain'));
    assert.equal(next.status, 201);
    await server.request('DELETE', `/api/files/${next.body.id}`, { token: operator.accessToken });
  });

  test('the upload routes are in the OpenAPI document', async () => {
    const doc = await server.request('GET', '/documentation/json');
    assert.equal(doc.status, 200);
    const post = doc.body.paths['/api/files'].post;
    assert.ok(post.requestBody.content['multipart/form-data']);
    assert.ok(post.responses['201'] && post.responses['413']);
    assert.ok(doc.body.paths['/api/files/{id}/raw'].get.responses['200'].content['application/octet-stream']);
  });
});

describe('files at the real 100 MiB default', () => {
  let server: TestServer;
  let operator: TestUser;

  before(async () => {
    server = await startTestServer();
    operator = await server.createUser({ role: 'operator' });
  });
  after(() => server.close());

  test('exactly 100 MiB streamed from a generator is stored whole; 100 MiB + 1 is 413 with no leftovers', async () => {
    assert.equal(server.service.deps.config.uploadMaxBytes, 100 * MiB);
    const exact = await streamUpload(server.url, '/api/files', { token: operator.accessToken, size: 100 * MiB, filename: 'exact.bin' });
    assert.equal(exact.status, 201, JSON.stringify(exact.json));
    assert.equal(exact.json.size, 100 * MiB);
    assert.equal(exact.json.sha256, exact.sha256);

    const download = await hashDownload(server.url, `/api/files/${exact.json.id}/raw`, operator.accessToken);
    assert.equal(download.status, 200);
    assert.equal(download.size, 100 * MiB);
    assert.equal(download.sha256, exact.sha256);

    const over = await streamUpload(server.url, '/api/files', { token: operator.accessToken, size: 100 * MiB + 1, filename: 'over.bin' });
    assert.equal(over.status, 413);
    assert.equal(over.json.error, `The file is larger than the limit of ${100 * MiB} bytes`);
    assert.deepEqual(filesUnder(path.join(server.dataDir, 'tmp')), []);
    assert.deepEqual(filesUnder(path.join(server.dataDir, 'uploads')), [exact.json.storedName]);
    assert.equal(rowCount(server), 1);
  });
});
