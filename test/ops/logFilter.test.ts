// docs/operating.md's jq filters, run with the real jq over lines the service's own logger writes (plus systemd's plain text).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { Writable } from 'node:stream';
import { createLogger } from '../../src/platform/logger.ts';

const doc = fs.readFileSync(new URL('../../docs/operating.md', import.meta.url), 'utf8');

function journal(): string {
  const lines: string[] = ['Started ems.service - EMS.'];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      lines.push(...String(chunk).split('\n').filter(Boolean));
      done();
    },
  });
  const logger = createLogger('trace', sink);
  for (const level of ['trace', 'debug', 'info', 'info', 'warn', 'error', 'fatal'] as const) logger[level](`a ${level} line`);
  lines.push('ems.service: Deactivated successfully.');
  return `${lines.join('\n')}\n`;
}

test('the documented warnings filter keeps exactly the warn, error and fatal lines', () => {
  const filter = /journalctl -u ems -o cat --since -1h \| jq -R '([^']+)'/.exec(doc)?.[1];
  assert.ok(filter, 'docs/operating.md shows the warnings filter');
  const out = execFileSync('jq', ['-c', '-R', filter], { input: journal(), encoding: 'utf8' });
  const levels = out
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line).level);
  assert.deepEqual(levels, ['warn', 'error', 'fatal']);
});

test("the documented 'service lines only' filter drops systemd's plain text and keeps every JSON line", () => {
  const filter = /journalctl -u ems -o cat \| jq -R '([^']+)'/.exec(doc)?.[1];
  assert.equal(filter, 'fromjson?');
  const out = execFileSync('jq', ['-c', '-R', filter!], { input: journal(), encoding: 'utf8' });
  assert.equal(out.trim().split('\n').length, 7);
});
