// The gateway's answers are parsed in one place (issue 40): outside src/gateway, code reads and writes the gateway
// through its typed port (GatewayPort: values, history, codes, set, alarms), never through the raw relay, its
// answer type or a wire path of its own.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';

const SRC = path.resolve(import.meta.dirname, '../../src');

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : sourceFiles(full);
    return /\.tsx?$/.test(entry.name) ? [full] : [];
  });
}

/**
 * What only the gateway's own code may say: the raw relay, the raw answer, the gateway's wire paths. (The HTTP client
 * itself is not on gateway's face, so test/structure/importGraph.test.ts keeps it out of reach.)
 */
const RAW = [
  { name: 'the raw relay', pattern: /\.relay\(/ },
  { name: 'the raw answer type', pattern: /\bGatewayAnswer\b/ },
  { name: 'a gateway wire path', pattern: /'\/(?:codes(?:\/(?:values|history|set|force-set))?|alarms|alarm-configs)'/ },
];

test('outside src/gateway nothing relays to the gateway or parses its answers: only the typed port is used', () => {
  const gateway = path.join(SRC, 'gateway') + path.sep;
  const web = path.join(SRC, 'web') + path.sep;
  const found: string[] = [];
  for (const file of sourceFiles(SRC)) {
    // The staff app calls the service's /api/iot routes, never the gateway.
    if (file.startsWith(gateway) || file.startsWith(web)) continue;
    const lines = fs.readFileSync(file, 'utf8').split('\n');
    lines.forEach((line, i) => {
      for (const { name, pattern } of RAW) if (pattern.test(line)) found.push(`${path.relative(SRC, file)}:${i + 1}: ${name}: ${line.trim()}`);
    });
  }
  assert.deepEqual(found, [], 'use GatewayPort (src/gateway/port.ts) instead');
});

test('the scan sees the patterns it forbids (it would catch the reads it replaced)', () => {
  const replaced = [
    "const answer = await this.deps.iot.relay('POST', '/codes/values', { body: { codes } });",
    "const answer = await iot.relay('GET', '/codes', {});",
    "import type { GatewayAnswer } from '../gateway/client.ts';",
    "await this.deps.iot.relay('GET', '/alarms', { query });",
  ];
  for (const line of replaced) {
    const caught = RAW.some(({ pattern }) => pattern.test(line));
    assert.ok(caught, line);
  }
});
