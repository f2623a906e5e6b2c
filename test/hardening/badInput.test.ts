// Bad dates and numbers in queries and bodies: one clear 400, never a 500 and never a silently odd value.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestServer, type TestServer } from '../helpers/server.ts';

let server: TestServer;
let token: string;
before(async () => {
  server = await startTestServer();
  token = (await server.createUser({ role: 'admin' })).accessToken;
});
after(() => server.close());

const BAD_TIMES = ['2016-12-31T23:59:60Z', '2026-01-01T00:00:00+01', '2026-02-30', '2026-13-01T00:00:00Z', 'yesterday'];

describe('dates', () => {
  for (const path of ['/api/alerts', '/api/faults', '/api/maintenance', '/api/audit']) {
    for (const value of BAD_TIMES) {
      test(`${path}?from=${value} is 400 with one message`, async () => {
        const response = await server.request('GET', `${path}?from=${encodeURIComponent(value)}`, { token });
        assert.equal(response.status, 400, response.text);
        assert.equal(response.body.details.length, 1);
        assert.equal(response.body.details[0].path, 'query.from');
        assert.match(response.body.details[0].message, /RFC 3339/);
      });
    }
  }

  test('a date-only and a full date-time bound still work', async () => {
    assert.equal((await server.request('GET', '/api/alerts?from=2026-01-01&to=2026-01-02T10:00:00%2B02:00', { token })).status, 200);
  });

  for (const [path, field, body] of [
    ['/api/alerts', 'occurredAt', { title: 't', level: 'info' }],
    ['/api/faults', 'reportedAt', { device: 'd', code: 'c', description: 'x', severity: 'low' }],
    ['/api/maintenance', 'scheduledAt', { equipment: 'e', type: 'inspection', description: 'x' }],
  ] as const) {
    for (const value of ['2016-12-31T23:59:60Z', '2026-01-01T00:00:00+01']) {
      test(`POST ${path} with ${field}=${value} is 400 with one message`, async () => {
        const response = await server.request('POST', path, { token, body: { ...body, [field]: value } });
        assert.equal(response.status, 400, response.text);
        assert.equal(response.body.details.length, 1, JSON.stringify(response.body.details));
        assert.equal(response.body.details[0].path, `body.${field}`);
      });
    }
  }
});

describe('numbers in the query', () => {
  for (const value of ['Infinity', '0x10', '1e1', ' 2', '']) {
    test(`?page=${JSON.stringify(value)} is 400`, async () => {
      const response = await server.request('GET', `/api/alerts?page=${encodeURIComponent(value)}`, { token });
      assert.equal(response.status, 400, response.text);
      assert.equal(response.body.details[0].path, 'query.page');
    });
  }

  test('?page=2 reads as 2', async () => {
    const response = await server.request('GET', '/api/alerts?page=2&pageSize=5', { token });
    assert.equal(response.status, 200);
    assert.equal(response.body.page, 2);
  });
});
