// A report run over HTTP as a person would ask for it: a plan created, run now, waited for; its files fetched; its
// PDF's text read by pdftotext (poppler-utils).
import assert from 'node:assert/strict';
import { runTool } from './tools.ts';
import fs from 'node:fs';
import path from 'node:path';
import { eventually, type TestServer } from './server.ts';

export type FinishedRun = {
  run: { id: number; status: string; files: { name: string }[]; [key: string]: unknown };
  /** The run's file whose name ends with `suffix` (".pdf", ".csv"). */
  file(suffix: string): Promise<Buffer>;
};

/** Creates the plan, runs it now and waits for the run to finish (asserted ok). */
export async function runReportNow(
  server: TestServer,
  token: string,
  plan: { name: string; templateId: string; cron: string; recipients: string[] },
): Promise<FinishedRun> {
  const created = await server.request('POST', '/api/reports/plans', { token, body: plan });
  assert.equal(created.status, 201, created.text);
  const started = await server.request('POST', `/api/reports/plans/${created.body.id}/run`, { token });
  assert.equal(started.status, 202, started.text);
  const run = await eventually(
    async () => {
      const read = await server.request('GET', `/api/reports/runs/${started.body.id}`, { token });
      return read.body.status === 'running' ? undefined : read.body;
    },
    'the report run',
    60_000,
  );
  assert.equal(run.status, 'ok', run.error);
  return {
    run,
    async file(suffix) {
      const name = run.files.map((f: { name: string }) => f.name).find((n: string) => n.endsWith(suffix));
      assert.ok(name, `a ${suffix} file among ${run.files.map((f: { name: string }) => f.name).join(', ')}`);
      const response = await fetch(`${server.url}/api/reports/runs/${run.id}/files/${encodeURIComponent(name)}`, {
        headers: { authorization: `Bearer ${token}` },
      });
      assert.equal(response.status, 200);
      return Buffer.from(await response.arrayBuffer());
    },
  };
}

/** The text of a PDF written to `file` (kept there, e.g. for pdftoppm), laid out as on the page. */
export async function pdfText(pdf: Buffer, file: string): Promise<string> {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, pdf);
  return runTool('pdftotext', ['-layout', file, '-']);
}
