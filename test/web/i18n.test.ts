// The staff app's words: en, de, fr and es have the same keys, no empty text, the same {placeholders} per key, and
// every key the code names literally (t('...')) is in en.json. In-process: reads the files.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { packageRoot } from '../../src/platform/packageRoot.ts';

const APP = path.join(packageRoot, 'src', 'web', 'app');
const read = (language: string) => JSON.parse(fs.readFileSync(path.join(APP, 'i18n', `${language}.json`), 'utf8')) as Record<string, string>;
const placeholders = (text: string) => [...text.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();

function sources(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sources(full);
    return /\.tsx?$/.test(entry.name) && !entry.name.endsWith('.d.ts') ? [full] : [];
  });
}

test('four languages with the same keys and placeholders', () => {
  const en = read('en');
  for (const language of ['de', 'fr', 'es']) {
    const other = read(language);
    assert.deepEqual(Object.keys(other).sort(), Object.keys(en).sort(), language);
    for (const [key, text] of Object.entries(other)) {
      assert.ok(text.trim(), `${language} ${key} is empty`);
      assert.deepEqual(placeholders(text), placeholders(en[key]), `${language} ${key}`);
    }
  }
});

test('every key the code names is in en.json', () => {
  const en = read('en');
  const missing: string[] = [];
  for (const file of sources(APP)) {
    for (const match of fs.readFileSync(file, 'utf8').matchAll(/\bt\(\s*'([a-zA-Z][\w.]*)'/g))
      if (!(match[1] in en)) missing.push(`${path.relative(APP, file)}: ${match[1]}`);
  }
  assert.deepEqual(missing, []);
});
