// The files context's refusals on the wire (issue 40, review 1.8): thrown as catalogue classes (src/platform/errors.ts),
// never a bare status number, with the status, code, body and headers they had as `new HttpError(<number>, …)`.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer, type TestUser } from '../helpers/server.ts';
import http from 'node:http';
import { fileBody, rawRequest, type RawResponse } from '../helpers/uploads.ts';

const LIMIT = 4096;
let server: TestServer;
let operator: TestUser;
before(async () => {
  server = await startTestServer({ EMS_UPLOAD_MAX_BYTES: String(LIMIT) });
  operator = await server.createUser({ role: 'operator' });
});
after(() => server?.close());

const upload = (method: string, pathname: string, data: Buffer | string, filename: string, contentType = 'application/octet-stream') => {
  const multipart = fileBody(data, filename, contentType);
  return rawRequest(server.url, method, pathname, {
    headers: { authorization: `Bearer ${operator.accessToken}`, 'content-type': multipart.contentType },
    body: multipart.body,
  });
};
/** The status, the body byte for byte, and the named headers (undefined: absent). */
const wire = (response: RawResponse, headers: string[] = []) => ({
  status: response.status,
  body: response.body.toString('utf8'),
  ...Object.fromEntries(headers.map((name) => [name, response.headers[name]])),
});

test('415: a model file of another type, an avatar that is no PNG, JPEG or WebP', async () => {
  assert.deepEqual(wire(await upload('POST', '/api/models', '<html></html>', 'scene.html')), {
    status: 415,
    body: '{"error":"A model file must be one of .glb, .gltf, .fbx, .obj, .stl; got \\"scene.html\\"","code":"UNSUPPORTED_MEDIA_TYPE"}',
  });
  assert.deepEqual(wire(await upload('PUT', `/api/users/${operator.user.id}/avatar`, 'GIF89a............', 'me.gif', 'image/gif')), {
    status: 415,
    body: '{"error":"An avatar must be a PNG, JPEG or WebP image (checked from its bytes, not its name or Content-Type)","code":"UNSUPPORTED_MEDIA_TYPE"}',
  });
});

test('416: a range outside the stored file, with Content-Range', async () => {
  const created = await upload('POST', '/api/files', Buffer.alloc(1000, 7), 'ranged.bin');
  assert.equal(created.status, 201, created.body.toString());
  const response = await rawRequest(server.url, 'GET', `/api/files/${created.json.id}/raw`, {
    headers: { authorization: `Bearer ${operator.accessToken}`, range: 'bytes=1000-' },
  });
  assert.deepEqual(wire(response, ['content-range']), {
    status: 416,
    body: '{"error":"Range not satisfiable","code":"RANGE_NOT_SATISFIABLE"}',
    'content-range': 'bytes */1000',
  });
});

test('405: a write to the public model files, with Allow', async () => {
  const created = await upload('POST', '/api/models', Buffer.alloc(100, 1), 'scene.glb');
  assert.equal(created.status, 201, created.body.toString());
  assert.deepEqual(wire(await rawRequest(server.url, 'PUT', created.json.url, { body: Buffer.from('overwrite') }), ['allow']), {
    status: 405,
    body: '{"error":"Model files are read-only here","code":"METHOD_NOT_ALLOWED"}',
    allow: 'GET, HEAD',
  });
});

/** A keep-alive POST (rawRequest asks for Connection: close): whether the answer closes is then the server's choice. */
const keepAliveUpload = (data: Buffer, filename: string) => {
  const multipart = fileBody(data, filename);
  const agent = new http.Agent({ keepAlive: true });
  const url = new URL(server.url);
  return new Promise<RawResponse>((resolve, reject) => {
    const req = http.request(
      {
        host: url.hostname,
        port: url.port,
        method: 'POST',
        path: '/api/files',
        agent,
        headers: { authorization: `Bearer ${operator.accessToken}`, 'content-type': multipart.contentType },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          agent.destroy();
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks), json: undefined });
        });
      },
    );
    req.on('error', reject);
    req.end(multipart.body);
  });
};

test('413: an upload past the limit; declared far past it, refused before the body is read and the connection closed', async () => {
  const body = `{"error":"The file is larger than the limit of ${LIMIT} bytes","code":"PAYLOAD_TOO_LARGE"}`;
  assert.deepEqual(wire(await keepAliveUpload(Buffer.alloc(LIMIT + 1), 'over.bin'), ['connection']), {
    status: 413,
    body,
    connection: 'keep-alive',
  });
  assert.deepEqual(wire(await keepAliveUpload(Buffer.alloc(LIMIT + 70 * 1024), 'huge.bin'), ['connection']), {
    status: 413,
    body,
    connection: 'close',
  });
});
