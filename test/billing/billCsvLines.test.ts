// The supplier bill CSV of printed lines (issue 51): one row per line grouped into bills by invoice number, each line
// audited on its own; a file with a bad row is refused naming the rows and writes nothing. The documented example
// (docs/examples/supplier-bill-lines.csv) is imported as it stands and passes every check on the data it describes.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { startTestServer, type TestServer, type TestUser } from '../helpers/server.ts';

const EXAMPLE = fs.readFileSync(new URL('../../docs/examples/supplier-bill-lines.csv', import.meta.url), 'utf8');
const addDays = (day: string, n: number) => new Date(Date.parse(`${day}T00:00:00Z`) + n * 86_400_000).toISOString().slice(0, 10);

describe('supplier bills imported by their printed lines', () => {
  let server: TestServer;
  let admin: TestUser;
  let operator: TestUser;
  let main: number;
  const count = () => server.service.deps.db.sqlite.prepare('SELECT count(*) FROM supplier_bills').pluck().get() as number;
  const send = (csv: string, user = operator) =>
    server.request('POST', '/api/billing/supplier-bills/import', { token: user.accessToken, raw: csv, headers: { 'content-type': 'text/csv' } });
  /** The example with its meter id replaced by the test's supply meter (the bill's first row names it). */
  const example = (edit: (text: string) => string = (text) => text) => edit(EXAMPLE.replace(/^1,/m, `${main},`));

  before(async () => {
    server = await startTestServer();
    admin = await server.createUser({ role: 'admin' });
    operator = await server.createUser({ role: 'operator' });
    const created = async (path: string, body: unknown) => {
      const response = await server.request('POST', path, { token: admin.accessToken, body });
      assert.equal(response.status, 201, response.text);
      return response.body;
    };
    // Peak 08:00–20:00 on weekdays at 0.25, else 0.20; 1.00 a day standing; 10 per kW of the month's peak.
    await created('/api/energy/tariffs', {
      validFrom: '2026-01-01',
      price: 0.2,
      carbonFactor: 0.5,
      standingChargePerDay: 1,
      demandChargePerKw: 10,
      bands: [{ name: 'peak', days: ['mon', 'tue', 'wed', 'thu', 'fri'], from: '08:00', to: '20:00', price: 0.25 }],
    });
    main = (await created('/api/meters', { name: 'Main', code: 'm.main', kind: 'energy', site: true })).id;
    // October 2026, 3 kWh every 15 minutes (12 kW): 22 weekdays × 48 × 3 = 3,168 kWh peak, 8,928 − 3,168 = 5,760 base.
    const { store } = server.service.deps.energy;
    const records: ReturnType<typeof store.load>[] = [];
    for (let day = '2026-10-01'; day < '2026-11-01'; day = addDays(day, 1)) {
      const record = store.load(main, day);
      record.kwh.fill(3);
      records.push(record);
    }
    store.transaction(() => store.save(records));
  });
  after(() => server?.close());

  test('the documented example is imported line by line and passes every check', async () => {
    const answer = await send(example());
    assert.equal(answer.status, 201, answer.text);
    const [check] = answer.body.items;
    assert.equal(answer.body.items.length, 1);
    assert.deepEqual(
      check.bill.lines.map((line: any) => [line.kind, line.band ?? null, line.quantity, line.rate, line.amount]),
      [
        ['energy', 'peak', 3168, 0.25, 792],
        ['energy', 'base', 5760, 0.2, 1152],
        ['standing', null, 31, 1, 31],
        ['demand', null, 12, 10, 120],
        ['tax', null, 2095, 0.19, 398.05],
      ],
    );
    assert.equal(check.bill.lines[0].description, 'Day units, weekdays 08-20');
    // The summary the shadow comparison reads, derived from the lines.
    assert.deepEqual([check.bill.bands, check.bill.billedKw, check.bill.standingCharges, check.bill.total], [{ peak: 3168, base: 5760 }, 12, 31, 2493.05]);
    assert.deepEqual(check.findings, []);
    assert.ok(check.audit.length >= 12, `${check.audit.length} checks`);
  });

  test('a wrong rate and a total that is not the sum of the lines are found on their lines, with the money at stake', async () => {
    const answer = await send(
      example((text) => text.replaceAll('INV-2610', 'INV-2610-B').replace('2493.05', '2600').replace('5760,0.20,1152.00', '5760,0.22,1267.20')),
    );
    assert.equal(answer.status, 201, answer.text);
    const findings = answer.body.items[0].findings.map((f: any) => [f.check, f.line, f.expected, f.billed, f.moneyAtStake]);
    const mine = findings.filter(([check]: [string]) => check === 'rate' || check === 'total');
    assert.deepEqual(mine, [
      ['rate', 'line 2: energy base (Night and weekend units)', 0.2, 0.22, 115.2],
      ['total', 'bill', 2608.25, 2600, -8.25],
    ]);
    // The same days as the example's bill: the audit says so.
    assert.ok(findings.some(([check]: [string]) => check === 'duplicate' || check === 'overlap'));
  });

  test('a file with bad rows is refused naming each row, and writes nothing', async () => {
    const before = count();
    const bad = [
      'meterId,from,to,reference,total,kind,band,quantity,rate,amount',
      `${main},2026-10-01,2026-11-01,INV-X,100,energy,base,-5,0.2,-1`,
      `,,,INV-X,,fee,,,,3`,
      `${main + 1},,,INV-X,,standing,,31,1,31`,
      `${main},2026-10-01,2026-11-01,,50,energy,base,10,0.2,2`,
      `${main},2026-10-01,2026-11-01,INV-Y,50,energy,base,ten,0.2,2`,
    ].join('\n');
    const refused = await send(bad);
    assert.equal(refused.status, 400, refused.text);
    const paths = refused.body.details.map((d: any) => d.path);
    assert.deepEqual(paths, ['line 2.quantity', 'line 2.amount', 'line 3.kind', 'line 4.meterId', 'line 5.reference', 'line 6.quantity']);
    assert.match(refused.body.details.find((d: any) => d.path === 'line 4.meterId').message, /differs from line 2, the first line of invoice INV-X/);
    assert.equal(count(), before);

    for (const [header, why] of [
      ['meterId,from,to,total,kind,amount', /missing reference/],
      ['meterId,from,to,total,quantity,amount', /add a kind column/],
    ] as const) {
      const answer = await send(`${header}\n${main},2026-10-01,2026-11-01,1,energy,1\n`);
      assert.equal(answer.status, 400, answer.text);
      assert.match(answer.body.details[0].message, why);
    }
    assert.equal(count(), before);
  });
});
