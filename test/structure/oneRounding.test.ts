// Structure (issue 57): one rounding of the figures the answers state. `round(value, places)` lives in
// src/platform/numbers.ts; 31 files once wrote it out (as `round`, `round3`, `round6`, with the places fixed or not).
// A file that needs another rounding (half-even, integer cents) names it for what it does, not `round…`.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';

const HELPER = 'src/platform/numbers.ts';

/** The names a rounding helper was given: `round`, `round3`, `round6`, `roundTo…`. */
const NAME = String.raw`round(?:\d+|To[A-Z]\w*)?`;
/** A declaration of a function so named: a function, an arrow or function expression bound to the name, a method. */
const DECLARES_ROUND = [
  new RegExp(String.raw`\bfunction\s+${NAME}\s*[<(]`),
  new RegExp(String.raw`\b(?:const|let|var)\s+${NAME}\s*(?::[^=]+)?=\s*(?:async\s+)?(?:function\b|(?:<[^>]*>)?\([^)]*\)\s*(?::[^=]+)?=>|\w+\s*=>)`),
  new RegExp(String.raw`^\s*(?:(?:private|public|protected|static|readonly)\s+)*${NAME}\s*\([^)]*\)\s*(?::\s*[\w<>[\]| ]+)?\s*\{`, 'm'),
];

export const declaresRound = (text: string) => DECLARES_ROUND.some((pattern) => pattern.test(text));

/** The TypeScript sources under src/ (the generated declarations left out), as `src/…` paths. */
const sources = () =>
  fs
    .readdirSync('src', { recursive: true, encoding: 'utf8' })
    .filter((file) => /\.tsx?$/.test(file) && !file.endsWith('.d.ts'))
    .map((file) => `src/${file.split(path.sep).join('/')}`);

test('the check finds each way a rounding function was written out, and not a loop counter or a call', () => {
  for (const text of [
    'const round = (value: number, places: number) => Math.round(value * 10 ** places) / 10 ** places;',
    'const round = (value: number) => Math.round(value * 10_000) / 10_000;',
    'function round(value: number): number {\n  return Math.round(value * 1000) / 1000;\n}',
    'function round3(value: number): number {',
    'export const round = (value: number, places = 3) => Math.round(value * 10 ** places) / 10 ** places;',
    'const roundToCents = function (value: number) { return value; };',
    'const round = (v) => v;',
    'class A {\n  private round(value: number): number {\n    return value;\n  }\n}',
  ])
    assert.ok(declaresRound(text), text);
  for (const text of [
    'for (let round = 0; round < natural.length; round += 1) {}',
    'const kw = round(value, 1);',
    "import { round } from '../platform/numbers.ts';",
    'const rounded = Math.round(value * 100) / 100;',
    'function roundTrip(url: string): Promise<number> {',
    'const rounds = (count: number) => count + 1;',
    '  return round(value, 3);',
  ])
    assert.ok(!declaresRound(text), text);
});

test('round(value, places) is declared once, in platform; every other file imports it', () => {
  const declaring = sources().filter((file) => declaresRound(fs.readFileSync(file, 'utf8')));
  assert.deepEqual(declaring, [HELPER]);
});

/** The helper's body written out inline: `Math.round(x * 100) / 100`, `Math.round((a + b) * 1e6) / 1e6`. */
const INLINE_ROUND = /Math\.round\(.*\*\s*(10(?:_?0)*|1e\d+)\)\s*\/\s*\1\b/;

test('no file writes the rounding out inline: round(value, places) instead', () => {
  assert.ok(INLINE_ROUND.test('costToday: Math.round(site.today.cost * 100) / 100,'));
  assert.ok(INLINE_ROUND.test('value: Math.round(stats.seconds * 1e6) / 1e6'));
  assert.ok(!INLINE_ROUND.test('lagSec: Math.round((this.now() - lastOk) / 1000)'));
  const inline = sources()
    .filter((file) => file !== HELPER)
    .flatMap((file) =>
      fs
        .readFileSync(file, 'utf8')
        .split('\n')
        .flatMap((line, i) => (INLINE_ROUND.test(line) ? [`${file}:${i + 1}`] : [])),
    );
  assert.deepEqual(inline, []);
});

test('the helper rounds as the copies did: Math.round of the scaled value', async () => {
  const { round } = await import(`../../${HELPER}`);
  for (const [value, places, expected] of [
    [1.23456, 3, 1.235],
    [2.5, 0, 3],
    [-2.5, 0, -2],
    [1234.5678, 2, 1234.57],
    [0.123456789, 6, 0.123457],
    [-0.04, 1, -0],
  ] as const)
    assert.ok(Object.is(round(value, places), expected), `round(${value}, ${places}) = ${round(value, places)}, not ${expected}`);
});
