// Structure (issue 40, review 1.8): an error is thrown as a class of the catalogue (src/platform/errors.ts: BadRequest,
// PayloadTooLarge, RangeNotSatisfiable, …), never as `new HttpError(<status>, …)` or a subclass of HttpError naming a
// status: the class says the reason, the catalogue its status and code. HttpError stays in errors.ts for framework
// errors that arrive with a bare status.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';

/** Where a bare status is still thrown, with the reason; each entry should go. */
const ALLOWED: Record<string, string> = {};

function sources(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const file = path.join(dir, entry.name);
    if (entry.isDirectory()) return sources(file);
    return /\.tsx?$/.test(entry.name) ? [file] : [];
  });
}

/** `new HttpError(` with a number (possibly on the next line), or a class extending HttpError. */
const BARE_STATUS = /new\s+HttpError\s*\(\s*\d|extends\s+HttpError\b/g;

const offenders = (root: string) =>
  sources(root)
    .map((file) => file.split(path.sep).join('/'))
    .filter((name) => name !== 'src/platform/errors.ts')
    .flatMap((name) => {
      const text = fs.readFileSync(name, 'utf8');
      return [...text.matchAll(BARE_STATUS)].map((match) => `${name}:${text.slice(0, match.index).split('\n').length}`);
    });

test('no bare-status HttpError outside the catalogue (src/platform/errors.ts), but the allow-list', () => {
  const found = offenders('src');
  const unlisted = found.filter((site) => !(site.split(':')[0] in ALLOWED));
  assert.deepEqual(unlisted, [], 'throw a catalogue class (add one to src/platform/errors.ts if none says the reason)');
  // The allow-list only shrinks: an entry whose file no longer throws a bare status is removed.
  for (const file of Object.keys(ALLOWED)) {
    if (!fs.existsSync(file)) continue;
    assert.ok(
      found.some((site) => site.startsWith(`${file}:`)),
      `${file} throws no bare status any more: remove it from ALLOWED`,
    );
  }
});

test('the pattern sees the forms it forbids', () => {
  const dir = fs.mkdtempSync(path.join(fs.realpathSync(process.env.TMPDIR ?? '/tmp'), 'ems-errors-'));
  try {
    fs.writeFileSync(
      path.join(dir, 'x.ts'),
      "throw new HttpError(415, 'x');\nthrow new HttpError(\n  413,\n  'y',\n);\nclass A extends HttpError {}\nthrow new UnsupportedMediaType('z');\n",
    );
    assert.deepEqual(
      offenders(dir).map((site) => site.split(':')[1]),
      ['1', '2', '6'],
    );
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
