// Structure (issue 24): one view over metered and hand-entered energy. Callers ask SiteEnergy and never branch on
// whether meters exist; one type is called EnergyFigures (the meters' figures); one function gives a site day's start.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';

function sources(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const file = path.join(dir, entry.name);
    if (entry.isDirectory()) return sources(file);
    return entry.name.endsWith('.ts') ? [file] : [];
  });
}

const files = sources('src').map((file) => ({ name: file.split(path.sep).join('/'), text: fs.readFileSync(file, 'utf8') }));

test('only SiteEnergy asks whether the site is metered', () => {
  const asking = files.filter(({ name, text }) => /\.metered\(\)/.test(text) && name !== 'src/energy/siteEnergy.ts').map(({ name }) => name);
  assert.deepEqual(asking, []);
});

test('one type is called EnergyFigures, and it is the meters’ figures', () => {
  const declaring = files
    .filter(({ text }) => /^\s*(?:export\s+)?(?:(?:class|interface)\s+EnergyFigures\b|type\s+EnergyFigures\s*=)/m.test(text))
    .map(({ name }) => name);
  assert.deepEqual(declaring, ['src/energy/figures.ts']);
});

test('one function gives the instant a local day starts', () => {
  const declaring = files.filter(({ text }) => /function\s+\w*[dD]ayStart\s*\(/.test(text)).map(({ name }) => name);
  assert.deepEqual(declaring, ['src/platform/time/calendar.ts']);
});
