// Known headers (src/platform/http/knownHeaders.ts): stored as setHeader stores them, so the wire carries the same
// header lines in the same order, Node's own lookups see them, and a bad constant is refused where it is declared.
import assert from 'node:assert/strict';
import { createServer, OutgoingMessage, type ServerResponse } from 'node:http';
import { after, test } from 'node:test';
import { knownHeader, setKnownHeader } from '../../src/platform/http/knownHeaders.ts';

const FRAME = knownHeader('X-Frame-Options', 'DENY');
const REQUEST_ID = knownHeader('X-Request-Id', '00000000-0000-4000-8000-000000000000');
const TYPE = knownHeader('Content-Type', 'application/json; charset=utf-8');

async function rawHeadersOf(write: (res: ServerResponse) => void): Promise<string[]> {
  const server = createServer((_req, res) => {
    write(res);
    res.end('{}');
  });
  after(() => server.close());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const response = await fetch(`http://127.0.0.1:${(server.address() as { port: number }).port}/`);
  await response.text();
  // fetch folds names to lower case; the order and values are what the server wrote (Date aside).
  return [...response.headers].filter(([name]) => name !== 'date').map(([name, value]) => `${name}: ${value}`);
}

test("this Node keeps a response's headers where knownHeaders looks for them (else it falls back to setHeader)", () => {
  assert.ok(
    Object.getOwnPropertySymbols(new OutgoingMessage()).some((symbol) => symbol.description === 'kOutHeaders'),
    `Node ${process.version}: no kOutHeaders, every known header goes through setHeader`,
  );
});

test('the wire carries what setHeader would have written, in the same order', async () => {
  const id = crypto.randomUUID();
  const known = await rawHeadersOf((res) => {
    setKnownHeader(res, REQUEST_ID, id);
    setKnownHeader(res, TYPE);
    setKnownHeader(res, FRAME);
  });
  const plain = await rawHeadersOf((res) => {
    res.setHeader('X-Request-Id', id);
    res.setHeader('Content-Type', 'application/json; charset=utf-8');
    res.setHeader('X-Frame-Options', 'DENY');
  });
  assert.deepEqual(known, plain);
  assert.ok(known.includes(`x-request-id: ${id}`) && known.includes('x-frame-options: DENY'));
});

test("Node's lookups see a known header, and a later setHeader replaces it rather than adding a second", async () => {
  const lines = await rawHeadersOf((res) => {
    setKnownHeader(res, FRAME);
    assert.equal(res.hasHeader('x-frame-options'), true);
    assert.equal(res.getHeader('X-Frame-Options'), 'DENY');
    assert.deepEqual(res.getHeaderNames(), ['x-frame-options']);
    res.setHeader('X-Frame-Options', 'SAMEORIGIN');
  });
  assert.deepEqual(
    lines.filter((line) => line.startsWith('x-frame-options')),
    ['x-frame-options: SAMEORIGIN'],
  );
});

test('a constant setHeader would refuse is refused where it is declared', () => {
  assert.throws(() => knownHeader('Bad Name', 'x'), { code: 'ERR_INVALID_HTTP_TOKEN' });
  assert.throws(() => knownHeader('X-Ok', 'line\r\nbreak'), { code: 'ERR_INVALID_CHAR' });
});
