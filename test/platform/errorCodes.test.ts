// Every error body carries a stable code from the one catalogue beside its message; the OpenAPI document lists them.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ERROR_CODES } from '../../src/platform/errors.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { createRoles, type Roles } from '../helpers/facility.ts';

describe('error codes', () => {
  let server: TestServer;
  let users: Roles;

  before(async () => {
    server = await startTestServer();
    users = await createRoles(server);
  });
  after(() => server.close());

  const expectError = (res: { status: number; body: any; text: string }, status: number, code: string) => {
    assert.equal(res.status, status, res.text);
    assert.equal(res.body.code, code, res.text);
    assert.equal(typeof res.body.error, 'string');
    assert.equal(ERROR_CODES[code as keyof typeof ERROR_CODES].status, status, 'the catalogue and the response agree');
  };

  test('schema and rule violations are VALIDATION with details', async () => {
    const res = await server.request('POST', '/api/alerts', { token: users.operator.accessToken, body: { level: 'nope' } });
    expectError(res, 400, 'VALIDATION');
    assert.ok(res.body.details.length > 0);
    const rule = await server.request('POST', '/api/reports/plans', {
      token: users.operator.accessToken,
      body: { name: 'x', templateId: 999, cron: 'bad', recipients: ['a@example.com'] },
    });
    expectError(rule, 400, 'VALIDATION');
    assert.deepEqual(rule.body.details.map((d: { path: string }) => d.path).sort(), ['body.cron', 'body.templateId']);
    const malformed = await server.request('POST', '/api/alerts', {
      token: users.operator.accessToken,
      raw: '{"title":',
      headers: { 'content-type': 'application/json' },
    });
    expectError(malformed, 400, 'VALIDATION');
  });

  test('UNAUTHENTICATED, FORBIDDEN, NOT_FOUND and CONFLICT', async () => {
    expectError(await server.request('GET', '/api/alerts'), 401, 'UNAUTHENTICATED');
    expectError(await server.request('GET', '/api/alerts', { token: 'not-a-token' }), 401, 'UNAUTHENTICATED');
    expectError(await server.request('POST', '/api/alerts', { token: users.viewer.accessToken, body: { title: 't', level: 'info' } }), 403, 'FORBIDDEN');
    expectError(await server.request('GET', '/api/alerts/987654', { token: users.viewer.accessToken }), 404, 'NOT_FOUND');
    expectError(await server.request('GET', '/api/no-such-route', { token: users.viewer.accessToken }), 404, 'NOT_FOUND');
    const created = await server.request('POST', '/api/alerts', { token: users.operator.accessToken, body: { title: 't', level: 'info' } });
    await server.request('POST', `/api/alerts/${created.body.id}/resolve`, { token: users.operator.accessToken });
    expectError(await server.request('POST', `/api/alerts/${created.body.id}/acknowledge`, { token: users.operator.accessToken }), 409, 'CONFLICT');
  });

  test('the OpenAPI document lists every code, and the Error schema requires one', async () => {
    const doc = (await server.request('GET', '/documentation/json')).body;
    const schema = doc.components.schemas.Error;
    assert.deepEqual(schema.required, ['error', 'code']);
    assert.deepEqual(schema.properties.code.enum, Object.keys(ERROR_CODES));
    for (const [code, { status }] of Object.entries(ERROR_CODES)) assert.match(doc.info.description, new RegExp(`\\| \`${code}\` \\| ${status} \\|`));
  });
});
