// Tenant billing on data with a known answer: four meters with constant intervals and one spike, a time-of-use tariff
// with standing and demand charges; each statement's lines are worked out by hand below, and the statements plus the
// landlord's share equal the site's bill to the cent. Also: bad splits and periods, the missing-data rule, parallel
// runs, issued runs immutable with a correcting statement, roles, PDF/XLSX and the mail to the tenant.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { eventually, fetchRetryingReset, startTestServer, type TestServer, type TestUser } from '../helpers/server.ts';
import { startMailCatcher, type MailCatcher } from '../helpers/smtp.ts';
import { localClock } from '../../src/platform/time/calendar.ts';

const DAYS = ['2030-01-01', '2030-01-02'];
const WEEKDAYS = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'];

describe('billing run on data with a known answer', () => {
  let server: TestServer;
  let mail: MailCatcher;
  let admin: TestUser;
  let viewer: TestUser;
  let operator: TestUser;
  const ids: Record<string, number> = {};
  let periodId: number;

  const as = (user: TestUser) => ({
    get: (path: string) => server.request('GET', path, { token: user.accessToken }),
    post: (path: string, body?: unknown) => server.request('POST', path, { token: user.accessToken, body }),
    put: (path: string, body?: unknown) => server.request('PUT', path, { token: user.accessToken, body }),
  });
  const ok = async <T>(response: Promise<{ status: number; body: T; text: string }>, status = 200): Promise<T> => {
    const answer = await response;
    assert.equal(answer.status, status, answer.text);
    return answer.body;
  };

  /** Writes a meter's days: `value` in every interval, `spike` in the one starting 10:00 local on the second day. */
  const write = (meterId: number, value: number, spike: number, days = DAYS) => {
    const { store, timezone } = server.service.deps.energy;
    const records = days.map((day) => {
      const record = store.load(meterId, day);
      record.kwh.fill(value);
      if (day === '2030-01-02')
        for (let i = 0; i < record.kwh.length; i += 1) if (localClock(timezone(), record.start + i * 900_000).minute === 600) record.kwh[i] = spike;
      return record;
    });
    store.transaction(() => store.save(records));
  };

  before(async () => {
    mail = await startMailCatcher();
    server = await startTestServer({ EMS_SMTP_URL: mail.url });
    admin = await server.createUser({ role: 'admin' });
    viewer = await server.createUser({ role: 'viewer' });
    operator = await server.createUser({ role: 'operator' });
    const api = as(admin);
    // Peak 08:00–20:00 on weekdays at 0.25, else 0.20; 1.00 a day standing; 10 per kW of the month's peak.
    await ok(
      api.post('/api/energy/tariffs', {
        validFrom: '2030-01-01',
        price: 0.2,
        carbonFactor: 0.5,
        standingChargePerDay: 1,
        demandChargePerKw: 10,
        bands: [{ name: 'peak', days: WEEKDAYS.slice(0, 5), from: '08:00', to: '20:00', price: 0.25 }],
      }),
      201,
    );
    for (const [name, body] of Object.entries({
      main: { name: 'Main', code: 'm.main', kind: 'energy', site: true },
      a: { name: 'Unit A', code: 'm.a', kind: 'energy', area: 'Tenants' },
      b: { name: 'Unit B', code: 'm.b', kind: 'energy', area: 'Tenants' },
      common: { name: 'Common areas', code: 'm.c', kind: 'energy', area: 'Common' },
    }))
      ids[name] = ((await ok(api.post('/api/meters', body), 201)) as { id: number }).id;
    // 2030-01-01 and 02 are a Tuesday and a Wednesday: 48 of each day's 96 intervals are peak, the spike (10:00) too.
    write(ids.main, 3, 6);
    write(ids.a, 1, 3);
    write(ids.b, 0.5, 1);
    write(ids.common, 1, 1.5);
    ids.t1 = (
      (await ok(api.post('/api/billing/tenants', { name: 'Tenant One', contactEmail: 'one@tenant.test', floorAreaM2: 100 }), 201)) as { id: number }
    ).id;
    ids.t2 = ((await ok(api.post('/api/billing/tenants', { name: 'Tenant Two', floorAreaM2: 50 }), 201)) as { id: number }).id;
    await ok(api.put(`/api/billing/allocations/${ids.a}`, { method: 'percent', shares: [{ tenantId: ids.t1, value: 100 }] }));
    await ok(api.put(`/api/billing/allocations/${ids.b}`, { method: 'percent', shares: [{ tenantId: ids.t2, value: 80 }], landlordValue: 20 }));
    // Common areas by floor area: 100 m², 50 m² and 50 m² vacant (the landlord's): 0.5, 0.25.
    const common = await ok(
      api.put(`/api/billing/allocations/${ids.common}`, {
        method: 'floor_area',
        shares: [
          { tenantId: ids.t1, value: 0 },
          { tenantId: ids.t2, value: 0 },
        ],
        landlordValue: 50,
      }),
    );
    assert.deepEqual((common as { fractions: unknown }).fractions, [
      { tenantId: ids.t1, fraction: 0.5 },
      { tenantId: ids.t2, fraction: 0.25 },
    ]);
    periodId = ((await ok(api.post('/api/billing/periods', { name: 'Two days', from: '2030-01-01', to: '2030-01-03' }), 201)) as { id: number }).id;
  });

  after(async () => {
    await server?.close();
    await mail?.close();
  });

  test('statements match the hand calculation and, with the landlord share, the site bill to the cent', async () => {
    const run = (await ok(as(admin).post(`/api/billing/periods/${periodId}/runs`))) as any;
    assert.equal(run.status, 'draft');
    // Site: peak 96×3 + 3 = 291 kWh × 0.25 = 72.75; base 96×3 = 288 × 0.20 = 57.60; standing 2 × 1.00;
    // demand: the month's peak is the spike, 6 kWh = 24 kW × 10 = 240 for January, × 2/31 days = 15.48.
    const site = run.summary.site;
    const line = (bill: any, band: string) => bill.energy.find((l: any) => l.band === band);
    assert.deepEqual(
      [line(site, 'peak').quantity, line(site, 'peak').amountCents, line(site, 'base').quantity, line(site, 'base').amountCents],
      [291, 7275, 288, 5760],
    );
    assert.equal(site.standing[0].amountCents, 200);
    assert.equal(site.demand[0].amountCents, 1548);
    assert.equal(site.demand[0].billedKw, 24);
    assert.equal(site.totalCents, 14783);
    assert.equal(site.carbonKg, 289.5);

    const one = (await ok(as(viewer).get(`/api/billing/statements/${run.statements.find((s: any) => s.tenantId === ids.t1).id}`))) as any;
    // Tenant One: unit A whole (peak 96 + 2 = 98, base 96) and half the common areas (peak 96.5, base 96):
    // peak 146.25 × 0.25 = 36.5625 → 36.56; base 144 × 0.20 = 28.80; standing 2.00 × 290.25 / 579 = 1.00;
    // demand at the spike: (3 + 0.5 × 1.5) / 6 = 0.625 of 15.4839 = 9.68.
    assert.deepEqual([line(one.content, 'peak').quantity, line(one.content, 'peak').amountCents], [146.25, 3656]);
    assert.deepEqual([line(one.content, 'base').quantity, line(one.content, 'base').amountCents], [144, 2880]);
    assert.equal(one.content.standing[0].amountCents, 100);
    assert.deepEqual([one.content.demand[0].share, one.content.demand[0].shareKw, one.content.demand[0].amountCents], [0.625, 15, 968]);
    assert.equal(one.totalCents, 7604);
    assert.equal(one.content.carbonKg, 145.125);
    assert.deepEqual(
      one.content.meters.map((m: any) => [m.name, m.share, m.billedQuantity, m.missing]),
      [
        ['Unit A', 1, 194, 0],
        ['Common areas', 0.5, 96.25, 0],
      ],
    );

    const two = (await ok(as(viewer).get(`/api/billing/statements/${run.statements.find((s: any) => s.tenantId === ids.t2).id}`))) as any;
    // Tenant Two: 80 % of unit B (peak 48.5, base 48) and a quarter of the common areas:
    // peak 62.925 × 0.25 = 15.73; base 62.4 × 0.20 = 12.48; standing 2 × 125.325 / 579 = 0.43;
    // demand (0.8 × 1 + 0.25 × 1.5) / 6 = 0.195833 of 15.4839 = 3.03.
    assert.deepEqual([line(two.content, 'peak').amountCents, line(two.content, 'base').amountCents, two.content.standing[0].amountCents], [1573, 1248, 43]);
    assert.equal(two.content.demand[0].amountCents, 303);
    assert.equal(two.totalCents, 3167);

    // The landlord's share is what is left, so the statements and it make the site's bill exactly.
    assert.deepEqual(run.summary.reconciliation, { siteTotalCents: 14783, statementsCents: 7604 + 3167, landlordCents: 4012 });
    assert.equal(run.summary.landlord.totalCents, 4012);
    assert.deepEqual(run.summary.quality, { intervals: 768, missing: 0, estimated: 0, missingPercent: 0, estimatedPercent: 0, billingEstimated: 0 });
  });

  test('shares that do not add up, unknown tenants, overlapping periods and export meters are 400 with the reason', async () => {
    const api = as(admin);
    const short = await api.put(`/api/billing/allocations/${ids.a}`, {
      method: 'percent',
      shares: [
        { tenantId: ids.t1, value: 60 },
        { tenantId: ids.t2, value: 30 },
      ],
    });
    assert.equal(short.status, 400);
    assert.match(short.text, /add up to 90 %, not 100 %/);
    const unknown = await api.put(`/api/billing/allocations/${ids.a}`, { method: 'fixed_key', shares: [{ tenantId: 999, value: 1 }] });
    assert.equal(unknown.status, 400);
    assert.match(unknown.text, /no tenant or cost centre 999/);
    const overlap = await api.post('/api/billing/periods', { from: '2030-01-02', to: '2030-02-01' });
    assert.equal(overlap.status, 400);
    assert.match(overlap.body.details[0].message, /overlaps period \d+ "Two days" \(2030-01-01 to 2030-01-03\)/);
    const backwards = await api.post('/api/billing/periods', { from: '2030-03-02', to: '2030-03-01' });
    assert.equal(backwards.status, 400);
    const exporter = ((await ok(api.post('/api/meters', { name: 'Export', code: 'm.x', kind: 'energy', role: 'export' }), 201)) as { id: number }).id;
    const exported = await api.put(`/api/billing/allocations/${exporter}`, { method: 'percent', shares: [{ tenantId: ids.t1, value: 100 }] });
    assert.equal(exported.status, 400);
    assert.match(exported.text, /export meter is not consumption/);
    // The split of unit A is as it was.
    const allocations = (await ok(as(viewer).get('/api/billing/allocations'))) as any;
    assert.deepEqual(allocations.items.find((a: any) => a.meterId === ids.a).fractions, [{ tenantId: ids.t1, fraction: 1 }]);
  });

  test('viewers read, operators cannot set up or run billing, admins do', async () => {
    assert.equal((await as(viewer).get('/api/billing/tenants')).status, 200);
    assert.equal((await as(viewer).post('/api/billing/tenants', { name: 'Nope' })).status, 403);
    assert.equal((await as(operator).post(`/api/billing/periods/${periodId}/runs`)).status, 403);
    assert.equal(
      (await as(operator).put('/api/billing/settings', { maxMissingPercent: 100, maxEstimatedPercent: 100, supplierBillTolerancePercent: 2 })).status,
      403,
    );
  });

  test('twenty runs of one period at once leave one draft with one statement set', async () => {
    const answers = await Promise.all(Array.from({ length: 20 }, () => as(admin).post(`/api/billing/periods/${periodId}/runs`)));
    assert.deepEqual(
      answers.map((a) => a.status),
      answers.map(() => 200),
    );
    assert.equal(new Set(answers.map((a) => a.body.id)).size, 1);
    const { sqlite } = server.service.deps.db;
    assert.equal(sqlite.prepare('SELECT count(*) FROM billing_runs WHERE period_id = ?').pluck().get(periodId), 1);
    assert.equal(sqlite.prepare('SELECT count(*) FROM billing_statements').pluck().get(), 2);
  });

  test('a run missing more data than the rule allows is refused, saying how much; issued, it is mailed and never changes', async () => {
    const api = as(admin);
    // A third period with unit B read on one day of two: 96 of its 192 intervals missing.
    const gap = ((await ok(api.post('/api/billing/periods', { name: 'Gap', from: '2030-01-10', to: '2030-01-12' }), 201)) as { id: number }).id;
    write(ids.main, 3, 3, ['2030-01-10', '2030-01-11']);
    write(ids.a, 1, 1, ['2030-01-10', '2030-01-11']);
    write(ids.common, 1, 1, ['2030-01-10', '2030-01-11']);
    write(ids.b, 0.5, 0.5, ['2030-01-10']);
    const draft = (await ok(api.post(`/api/billing/periods/${gap}/runs`))) as any;
    assert.equal(draft.summary.quality.missing, 96);
    const refused = await api.post(`/api/billing/runs/${draft.id}/issue`);
    assert.equal(refused.status, 400);
    assert.match(refused.text, /96 of 768 metered intervals \(12\.5 %\) have no data; the site allows 0\.5 %/);
    assert.equal(((await ok(api.get(`/api/billing/runs/${draft.id}`))) as any).status, 'draft');

    // The two-day period issues; Tenant One's contact gets the statement as PDF and XLSX.
    const run = (await ok(api.post(`/api/billing/periods/${periodId}/runs`))) as any;
    const sentBefore = mail.messages.length;
    const issued = (await ok(api.post(`/api/billing/runs/${run.id}/issue`))) as any;
    assert.equal(issued.status, 'issued');
    assert.equal((await api.post(`/api/billing/runs/${run.id}/issue`)).status, 409);
    // Building and mailing a PDF and an XLSX takes seconds on a busy machine: waited for, not timed.
    await eventually(async () => (mail.messages.slice(sentBefore).some((m) => m.to.includes('one@tenant.test')) ? true : undefined), 'the statement mail');
    const sent = mail.messages.slice(sentBefore).filter((m) => m.to.includes('one@tenant.test'));
    assert.equal(sent.length, 1);
    assert.match(sent[0].raw, /Energy statement \d+: Tenant One, 2030-01-01 to 2030-01-02/);
    assert.match(sent[0].raw, /filename=statement-\d+-Tenant-One-2030-01-01\.pdf/);
    assert.match(sent[0].raw, /filename=statement-\d+-Tenant-One-2030-01-01\.xlsx/);
    // Tenant Two has no contact: nothing is sent to anyone else.
    assert.equal(mail.messages.slice(sentBefore).length, 1);
    const audited = server.service.deps.db.sqlite.prepare("SELECT count(*) FROM audit_log WHERE resource = 'billing_runs' AND action = 'issue'").pluck().get();
    assert.equal(audited, 1);

    // A history import rewrites unit A's first day at 2 kWh an interval (peak 48, base 48 more kWh for Tenant One).
    const oneId = issued.statements.find((s: any) => s.tenantId === ids.t1).id;
    const issuedOne = await ok(api.get(`/api/billing/statements/${oneId}`));
    write(ids.a, 2, 2, ['2030-01-01']);
    const restated = (await ok(api.post(`/api/billing/periods/${periodId}/runs`))) as any;
    assert.notEqual(restated.id, run.id);
    assert.equal(restated.kind, 'restatement');
    assert.equal(restated.correctsRunId, run.id);
    const corrected = (await ok(api.get(`/api/billing/statements/${restated.statements.find((s: any) => s.tenantId === ids.t1).id}`))) as any;
    const peak = corrected.difference.energy.find((l: any) => l.band === 'peak');
    const base = corrected.difference.energy.find((l: any) => l.band === 'base');
    // +48 kWh at 0.25 = 12.00 and +48 kWh at 0.20 = 9.60; standing and demand shares move too (the spike day is unchanged).
    assert.deepEqual([peak.quantity, peak.amountCents, base.quantity, base.amountCents], [48, 1200, 48, 960]);
    assert.equal(corrected.difference.correctsStatementId, oneId);
    const correctedPdf = await fetchRetryingReset(`${server.url}/api/billing/statements/${corrected.id}/pdf`, {
      headers: { authorization: `Bearer ${admin.accessToken}` },
    });
    assert.equal(correctedPdf.status, 200);
    if (process.env.BILLING_PDF_OUT)
      (await import('node:fs')).writeFileSync(`${process.env.BILLING_PDF_OUT}.restated.pdf`, Buffer.from(await correctedPdf.arrayBuffer()));
    assert.equal(corrected.difference.totalCents, corrected.totalCents - 7604);
    // The lines of the difference add up to its total: energy, standing (2.00 × 386.25 / 579 = 1.33, was 1.00), demand (unchanged).
    assert.deepEqual([corrected.difference.standingCents, corrected.difference.demandCents], [33, 0]);
    assert.equal(1200 + 960 + 33, corrected.difference.totalCents);
    // The issued statement is as it was issued, and the restatement still reconciles.
    assert.deepEqual(await ok(api.get(`/api/billing/statements/${oneId}`)), issuedOne);
    const r = restated.summary.reconciliation;
    assert.equal(r.statementsCents + r.landlordCents, r.siteTotalCents);

    // The rule can be relaxed: then the gap period issues.
    await ok(api.put('/api/billing/settings', { maxMissingPercent: 15, maxEstimatedPercent: 5, supplierBillTolerancePercent: 2 }));
    const mailed = mail.messages.length;
    assert.equal(((await ok(api.post(`/api/billing/runs/${draft.id}/issue`))) as any).status, 'issued');
    await eventually(async () => (mail.messages.length > mailed ? true : undefined), "the gap period's statement mail");
    assert.match(mail.messages[mailed].raw, /Tenant One, 2030-01-10 to 2030-01-11/);
  });

  test('a statement downloads as PDF and XLSX', async () => {
    const runs = (await ok(as(viewer).get(`/api/billing/periods/${periodId}/runs`))) as any;
    const id = runs.items[0].statements[0].id;
    const pdf = await fetchRetryingReset(`${server.url}/api/billing/statements/${id}/pdf`, { headers: { authorization: `Bearer ${viewer.accessToken}` } });
    assert.equal(pdf.status, 200);
    assert.equal(pdf.headers.get('content-type'), 'application/pdf');
    const bytes = Buffer.from(await pdf.arrayBuffer());
    assert.equal(bytes.subarray(0, 5).toString(), '%PDF-');
    if (process.env.BILLING_PDF_OUT) (await import('node:fs')).writeFileSync(process.env.BILLING_PDF_OUT, bytes);
    const xlsx = await fetchRetryingReset(`${server.url}/api/billing/statements/${id}/xlsx`, { headers: { authorization: `Bearer ${viewer.accessToken}` } });
    assert.equal(xlsx.status, 200);
    const { default: ExcelJS } = await import('exceljs');
    const book = new ExcelJS.Workbook();
    await book.xlsx.load(Buffer.from(await xlsx.arrayBuffer()) as never);
    const rows = book.getWorksheet('Statement')!.getSheetValues().filter(Boolean) as unknown[][];
    const total = rows.find((row) => row[1] === 'Total');
    // Statements are listed by tenant name: Tenant One's, 76.04.
    assert.equal(runs.items[0].statements[0].tenantId, ids.t1);
    assert.equal(total?.[2], 76.04);
    // The lines are figures, not text: the peak band's 146.25 kWh and 36.56.
    const peak = rows.find((row) => row[1] === 'electricity' && row[2] === 'peak');
    assert.deepEqual(peak?.slice(3, 5), [146.25, 36.56]);
    assert.equal(
      (await fetchRetryingReset(`${server.url}/api/billing/statements/99999/pdf`, { headers: { authorization: `Bearer ${viewer.accessToken}` } })).status,
      404,
    );
  });
});
