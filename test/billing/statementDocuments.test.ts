// A statement as people read it (issue 58): a tenant named "Café Nord" downloads as its own name (RFC 6266: an ASCII
// fallback and the exact UTF-8 name in filename*, never a raw Latin-1 byte), money carries thousands separators in the
// PDF, and every figure of the demand section is a number in the XLSX (not "26.088 of 183.336" as text).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { startTestServer, type TestServer, type TestUser } from '../helpers/server.ts';
import { contentDisposition } from '../../src/platform/http/attachment.ts';

const run = promisify(execFile);

describe('statement downloads', () => {
  let server: TestServer;
  let admin: TestUser;
  let statementId: number;

  const ok = async <T>(response: Promise<{ status: number; body: T; text: string }>, status = 200): Promise<T> => {
    const answer = await response;
    assert.equal(answer.status, status, answer.text);
    return answer.body;
  };
  const download = (pathname: string) => fetch(`${server.url}${pathname}`, { headers: { authorization: `Bearer ${admin.accessToken}` } });

  before(async () => {
    server = await startTestServer();
    admin = await server.createUser({ role: 'admin' });
    const post = (pathname: string, body: unknown) => server.request('POST', pathname, { token: admin.accessToken, body });
    await ok(post('/api/energy/tariffs', { validFrom: '2030-01-01', price: 0.3, carbonFactor: 0.4, standingChargePerDay: 2, demandChargePerKw: 12 }), 201);
    const main = (await ok(post('/api/meters', { name: 'Main', code: 'm.main', kind: 'energy', site: true }), 201)) as { id: number };
    const unit = (await ok(post('/api/meters', { name: 'Unit', code: 'm.unit', kind: 'energy', area: 'Tenants' }), 201)) as { id: number };
    // 40 kWh every 15 minutes for two days on the unit (7,680 kWh: 2,304.00 of energy), 50 on the site meter.
    const { store } = server.service.deps.energy;
    const records = ['2030-01-01', '2030-01-02'].flatMap((day) =>
      [
        [main.id, 50],
        [unit.id, 40],
      ].map(([id, value]) => {
        const record = store.load(id, day);
        record.kwh.fill(value);
        return record;
      }),
    );
    store.transaction(() => store.save(records));
    const tenant = (await ok(post('/api/billing/tenants', { name: 'Café Nord', floorAreaM2: 80 }), 201)) as { id: number };
    await ok(
      server.request('PUT', `/api/billing/allocations/${unit.id}`, {
        token: admin.accessToken,
        body: { method: 'percent', shares: [{ tenantId: tenant.id, value: 100 }] },
      }),
    );
    const period = (await ok(post('/api/billing/periods', { name: 'Two days', from: '2030-01-01', to: '2030-01-03' }), 201)) as { id: number };
    const billingRun = (await ok(post(`/api/billing/periods/${period.id}/runs`, undefined))) as { statements: { id: number }[] };
    statementId = billingRun.statements[0].id;
  });

  after(async () => {
    await server?.close();
  });

  test('the name goes as an ASCII fallback and as UTF-8 filename*, never as a raw byte', async () => {
    for (const kind of ['pdf', 'xlsx']) {
      const answer = await download(`/api/billing/statements/${statementId}/${kind}`);
      assert.equal(answer.status, 200);
      // fetch reads header bytes as Latin-1: a raw é would come back as "é", an ASCII header unchanged.
      const header = answer.headers.get('content-disposition') ?? '';
      assert.match(header, /^[\x20-\x7e]+$/, `only ASCII in the header: ${header}`);
      assert.equal(
        header,
        `attachment; filename="statement-${statementId}-Caf_-Nord-2030-01-01.${kind}"; filename*=UTF-8''statement-${statementId}-Caf%C3%A9-Nord-2030-01-01.${kind}`,
      );
      await answer.arrayBuffer();
    }
  });

  test('the same rule holds for any name: quotes, paths, control characters and non-Latin text', () => {
    assert.equal(contentDisposition('attachment', 'a"b;c%.csv'), `attachment; filename="a_b_c_.csv"; filename*=UTF-8''a%22b%3Bc%25.csv`);
    // A path is never a name: only its last segment goes out.
    assert.equal(contentDisposition('attachment', '..\\x/y.csv'), `attachment; filename="y.csv"; filename*=UTF-8''y.csv`);
    assert.equal(
      contentDisposition('attachment', 'Zähler\r\n東京.pdf'),
      `attachment; filename="Z_hler__.pdf"; filename*=UTF-8''Z%C3%A4hler%E6%9D%B1%E4%BA%AC.pdf`,
    );
  });

  test('money in the PDF has thousands separators', async () => {
    const bytes = Buffer.from(await (await download(`/api/billing/statements/${statementId}/pdf`)).arrayBuffer());
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ems-statement-'));
    try {
      const file = path.join(dir, 'statement.pdf');
      fs.writeFileSync(file, bytes);
      // Asynchronous: the service under test lives in this process and must keep answering meanwhile.
      const { stdout } = await run('pdftotext', ['-layout', file, '-']);
      // 7,680 kWh × 0.30 = 2,304.00 of energy.
      assert.match(stdout, /2,304\.00 EUR/);
      assert.doesNotMatch(stdout, /\d{4}\.\d{2} EUR/, 'no amount of four or more digits without a separator');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  test('the XLSX demand section holds numbers in every figure column', async () => {
    const { default: ExcelJS } = await import('exceljs');
    const book = new ExcelJS.Workbook();
    await book.xlsx.load(Buffer.from(await (await download(`/api/billing/statements/${statementId}/xlsx`)).arrayBuffer()) as never);
    const rows = book.getWorksheet('Statement')!.getSheetValues().filter(Boolean) as unknown[][];
    const head = rows.findIndex((row) => row[1] === 'Month');
    assert.ok(head > 0, 'a demand section');
    const [month, billedKw, siteKw, yourKw, share, amount] = rows[head + 1].slice(1);
    assert.equal(month, '2030-01');
    // The unit's 40 kWh a quarter hour is 160 kW at the site's peak of 200 kW: a share of 0.8.
    assert.deepEqual([billedKw, siteKw, yourKw, share], [200, 200, 160, 0.8]);
    assert.equal(typeof amount, 'number');
  });
});
