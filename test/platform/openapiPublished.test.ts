// The published OpenAPI document as client generators and linters read it: Redocly's recommended ruleset passes with
// 0 errors and 0 warnings (run offline), the error schema is referenced, patterns are portable, and it is served
// gzip-compressed with an ETag.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { startTestServer, tempDir, type TestServer } from '../helpers/server.ts';
import { repoRoot } from '../helpers/serviceProcess.ts';
import { displayTextPattern } from '../../src/platform/http/schemas.ts';

let server: TestServer;
let doc: any;
before(async () => {
  server = await startTestServer();
  doc = (await server.request('GET', '/documentation/json')).body;
});
after(() => server.close());

function walk(value: unknown, visit: (key: string, item: unknown, parent: Record<string, unknown>) => void): void {
  if (Array.isArray(value)) for (const item of value) walk(item, visit);
  else if (value && typeof value === 'object')
    for (const [key, item] of Object.entries(value)) {
      visit(key, item, value as Record<string, unknown>);
      walk(item, visit);
    }
}

test("Redocly's recommended ruleset: 0 errors and 0 warnings", () => {
  const dir = tempDir();
  const file = path.join(dir, 'ems-openapi.json');
  fs.writeFileSync(file, JSON.stringify(doc));
  const result = spawnSync(path.join(repoRoot, 'node_modules', '.bin', 'redocly'), ['lint', file, '--extends', 'recommended', '--format', 'json'], {
    cwd: dir,
    encoding: 'utf8',
    // Offline and quiet: no telemetry, no update check.
    env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_UPDATE_NOTIFIER: '1' },
  });
  fs.rmSync(dir, { recursive: true, force: true });
  const report = JSON.parse(result.stdout.slice(result.stdout.indexOf('{'))) as {
    totals: { errors: number; warnings: number };
    problems: Array<{ ruleId: string; message: string }>;
  };
  assert.deepEqual(
    report.problems.map((problem) => `${problem.ruleId}: ${problem.message}`),
    [],
  );
  assert.deepEqual(report.totals, { ...report.totals, errors: 0, warnings: 0 });
});

test('the error body is one referenced schema, never inlined', () => {
  let inlined = 0;
  let referenced = 0;
  const responses = Object.values(doc.paths).flatMap((operations) =>
    Object.values(operations as Record<string, { responses: unknown }>).map((op) => op.responses),
  );
  walk(responses, (key, item) => {
    if (key === 'schema' && item && typeof item === 'object') {
      const schema = item as { $ref?: string; properties?: Record<string, unknown> };
      if (schema.$ref === '#/components/schemas/Error') referenced++;
      else if (schema.properties && 'error' in schema.properties && 'code' in schema.properties) inlined++;
    }
  });
  assert.equal(inlined, 0);
  assert.ok(referenced > 100, `${referenced} references`);
  assert.deepEqual(doc.info.contact, { name: 'The administrator of this EMS appliance' });
  assert.ok(doc.info.license.name);
  assert.match(doc.info.description, /refreshes \*\*once\*\*/);
});

test('published patterns read the same without the u flag and in Python; the server still refuses control characters', async () => {
  const patterns = new Set<string>();
  walk(doc.paths, (key, item) => {
    if (key === 'pattern' && typeof item === 'string') patterns.add(item);
  });
  assert.ok(patterns.size >= 10);
  assert.equal([...patterns].filter((pattern) => pattern.includes('\\p{')).length, 0, 'no \\p{…} class');
  const display = [...patterns].find((pattern) => pattern.startsWith('^(?=[^'))!;
  for (const flags of ['', 'u']) {
    const regex = new RegExp(display, flags);
    assert.ok(regex.test('Main incomer') && regex.test('Office'), flags);
    for (const bad of ['line\nbreak', 'bell\u0007', 'c1\u0085', 'bidi\u202Eexe']) assert.equal(regex.test(bad), false, `${flags}: ${JSON.stringify(bad)}`);
  }
  // The server's own pattern is unchanged, and the published one accepts and refuses exactly what it does.
  assert.match(displayTextPattern(true), /\\p\{Cc\}/);
  const strict = new RegExp(displayTextPattern(true), 'u');
  for (let code = 0; code <= 0x2070; code++) {
    const text = `a${String.fromCharCode(code)}b`;
    assert.equal(new RegExp(display).test(text), strict.test(text), `U+${code.toString(16)}`);
  }
  const python = execFileSync('python3', ['-c', 'import json,re,sys\nfor p in json.load(sys.stdin):\n  re.compile(p)\nprint("compiled")'], {
    input: JSON.stringify([...patterns]),
    encoding: 'utf8',
  });
  assert.equal(python.trim(), 'compiled');
  const refused = await server.request('PUT', '/api/configs', {
    token: (await server.createUser({ role: 'admin' })).accessToken,
    body: { siteName: 'HQ\u0085Berlin' },
  });
  assert.equal(refused.status, 400);
});

function getRaw(headers: Record<string, string>): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: Buffer }> {
  return new Promise((resolve, reject) => {
    http
      .get(`${server.url}/documentation/json`, { headers }, (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => resolve({ status: response.statusCode!, headers: response.headers, body: Buffer.concat(chunks) }));
      })
      .on('error', reject);
  });
}

test('served gzip-compressed to a client that accepts it, with an ETag that answers 304', async () => {
  const plain = await getRaw({});
  assert.equal(plain.status, 200);
  assert.equal(plain.headers['content-encoding'], undefined);
  assert.equal(plain.headers['cache-control'], 'no-cache');
  assert.match(String(plain.headers.vary), /Accept-Encoding/i);
  const etag = String(plain.headers.etag);
  assert.match(etag, /^"[\w-]+"$/);
  const zipped = await getRaw({ 'accept-encoding': 'gzip, deflate, br' });
  assert.equal(zipped.headers['content-encoding'], 'gzip');
  assert.equal(zipped.headers.etag, etag);
  assert.deepEqual(gunzipSync(zipped.body), plain.body);
  assert.ok(zipped.body.length * 5 < plain.body.length, `${zipped.body.length} of ${plain.body.length} bytes`);
  const again = await getRaw({ 'if-none-match': etag, 'accept-encoding': 'gzip' });
  assert.equal(again.status, 304);
  assert.equal(again.body.length, 0);
  assert.equal((await getRaw({ 'if-none-match': '"something-else"' })).status, 200);
});
