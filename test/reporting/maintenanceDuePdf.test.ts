// Issue 39 #6: the maintenance-due PDF over 150 open records at the largest field lengths the API accepts renders (it
// ran out of its worker's 96 MiB from ~90 records: every over-wide cell was cut one character at a time, each prefix
// measured whole and cached by pdfkit). Its first pages are rendered by pdftoppm into EMS_REPORT_PNG_DIR (else a temporary
// directory) for a look.
import assert from 'node:assert/strict';
import { runTool } from '../helpers/tools.ts';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import PDFDocument from 'pdfkit';
import { drawLine, textWidth } from '../../src/reporting/reports/pdfText.ts';
import { fitColumns } from '../../src/reporting/reports/renderPdf.ts';
import { pdfText, runReportNow } from '../helpers/reportRun.ts';
import { eventually, startTestServer, tempDir, type TestServer } from '../helpers/server.ts';

const OUT = process.env.EMS_REPORT_PNG_DIR ?? tempDir('ems-maintenance-due-');

describe('maintenance-due PDF at the largest field lengths', () => {
  let server: TestServer;
  let token: string;
  before(async () => {
    server = await startTestServer();
    token = (await server.createUser({ role: 'admin' })).accessToken;
  });
  after(() => server.close());

  test('150 open records with 200-character equipment and assignee and 4,000-character descriptions render', async () => {
    const scheduledAt = new Date(Date.now() + 86_400_000).toISOString();
    for (let i = 0; i < 150; i += 1) {
      const tag = String(i).padStart(3, '0');
      const created = await server.request('POST', '/api/maintenance', {
        token,
        body: {
          equipment: `EQ${tag}${'W'.repeat(195)}`,
          type: 'preventive',
          description: `D${tag}${'m'.repeat(3996)}`,
          assignee: `AS${tag}${'M'.repeat(195)}`,
          scheduledAt,
        },
      });
      assert.equal(created.status, 201, created.text);
    }
    const started = Date.now();
    const { run, file } = await runReportNow(server, token, {
      name: 'Maintenance due, long fields',
      templateId: 'maintenance-due',
      cron: '0 7 * * *',
      recipients: ['ops@example.test'],
    });
    const tookMs = Date.now() - started;
    assert.equal(run.status, 'ok');
    const pdf = await file('.pdf');
    const text = await pdfText(pdf, path.join(OUT, 'maintenance-due.pdf'));
    // Every record has its row, each long cell cut with "…".
    for (const tag of ['000', '075', '149']) assert.match(text, new RegExp(`EQ${tag}W+…`));
    assert.equal((text.match(/EQ\d{3}W+…/g) ?? []).length, 150);
    // The short columns keep their width: type and status are whole, not squeezed to "p…" by the long ones.
    assert.equal((text.match(/ preventive +planned +AS\d{3}M+… +no/g) ?? []).length, 150, text.slice(0, 3000));
    await runTool('pdftoppm', ['-png', '-r', '60', '-f', '1', '-l', '2', path.join(OUT, 'maintenance-due.pdf'), path.join(OUT, 'maintenance-due')]);
    assert.ok(fs.readdirSync(OUT).some((name) => /^maintenance-due-0*1\.png$/.test(name)));
    console.log(`maintenance-due PDF, 150 records at maximum lengths: ${tookMs} ms, ${pdf.length} bytes`);
  });

  test('a plan deleted while its run is building: the run is dropped with an info line, not mailed, no error (issue 39 #12)', async () => {
    // The 150 long records above make the build take seconds: the DELETE lands while it runs.
    const plan = await server.request('POST', '/api/reports/plans', {
      token,
      body: { name: 'Deleted while building', templateId: 'maintenance-due', cron: '0 7 * * *', recipients: ['ops@example.test'] },
    });
    assert.equal(plan.status, 201, plan.text);
    const run = await server.request('POST', `/api/reports/plans/${plan.body.id}/run`, { token });
    assert.equal(run.status, 202, run.text);
    assert.equal((await server.request('DELETE', `/api/reports/plans/${plan.body.id}`, { token })).status, 204);
    const ofRun = () => server.logs.map((line) => JSON.parse(line)).filter((line) => line.runId === run.body.id);
    await eventually(async () => (ofRun().length > 0 ? true : undefined), 'a log line of the run', 60_000);
    assert.deepEqual(
      ofRun().map((line) => [line.level, line.msg]),
      [['info', 'report plan deleted during its run: the run is dropped']],
    );
    assert.ok(!fs.existsSync(path.join(server.dataDir, 'reports', String(plan.body.id))), 'no files kept for the deleted plan');
  });
});

describe('drawLine cuts an over-wide line', () => {
  test('to the longest prefix with "…" that fits, as the character-by-character cut did', () => {
    const doc = new PDFDocument({ autoFirstPage: true });
    for (const [text, width] of [
      ['Pump station north, hall 3, level 2', 80],
      ['W'.repeat(200), 100],
      ['i'.repeat(4000), 50],
      ['AB', 1],
      ['fits', 200],
    ] as const) {
      const drawn = drawLine(doc, text, 10, 10, { size: 8, width });
      assert.ok(drawn <= width || drawn === textWidth(doc, `${text[0]}…`, 8), `${text.slice(0, 20)}: ${drawn} > ${width}`);
      if (textWidth(doc, text, 8) <= width) {
        assert.equal(drawn, textWidth(doc, text, 8));
        continue;
      }
      // One more character would not have fitted.
      const chars = [...text];
      let n = 1;
      while (n < chars.length && textWidth(doc, `${chars.slice(0, n + 1).join('')}…`, 8) <= width) n += 1;
      assert.equal(drawn, textWidth(doc, `${chars.slice(0, n).join('').trimEnd()}…`, 8), text.slice(0, 20));
    }
    doc.end();
  });
});

describe('table columns', () => {
  test('fit the width: proportional when they fit, else only the wide ones narrowed to an equal share of the rest', () => {
    assert.deepEqual(fitColumns([10, 20, 30], 120), [20, 40, 60]);
    assert.deepEqual(fitColumns([50, 1000, 30, 1000], 480), [50, 200, 30, 200]);
    assert.deepEqual(fitColumns([400, 400], 100), [50, 50]);
  });
});
