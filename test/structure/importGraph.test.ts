// The import graph of src/: no cycles between files or feature folders; the data layer and the HTTP layer stay apart.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';

const SRC = path.resolve(import.meta.dirname, '../../src');

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return entry.name.endsWith('.ts') ? [full] : [];
  });
}

/** file (relative to src) → the src files it imports, type-only imports included (they still tie the modules together). */
function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of sourceFiles(SRC)) {
    const text = fs.readFileSync(file, 'utf8');
    const targets = [...text.matchAll(/(?:import|export)\s[^'";]*?from\s+'(\.[^']+)'/g)].map((match) =>
      path.relative(SRC, path.resolve(path.dirname(file), match[1])),
    );
    graph.set(
      path.relative(SRC, file),
      targets.filter((target) => !target.startsWith('..')),
    );
  }
  return graph;
}

function cycles(graph: Map<string, string[]>): string[][] {
  const found: string[][] = [];
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const visit = (node: string) => {
    state.set(node, 'open');
    stack.push(node);
    for (const next of graph.get(node) ?? []) {
      if (state.get(next) === 'open') found.push([...stack.slice(stack.indexOf(next)), next]);
      else if (!state.has(next)) visit(next);
    }
    stack.pop();
    state.set(node, 'done');
  };
  for (const node of graph.keys()) if (!state.has(node)) visit(node);
  return found;
}

/** Top-level area of a src file: its folder (`users`, `db`, `http`), or the file itself at the top. */
const area = (file: string) => (file.includes('/') ? file.slice(0, file.indexOf('/')) : file);

test('no import cycle between files', () => {
  assert.deepEqual(cycles(importGraph()), []);
});

test('no import cycle between the storage, HTTP and feature folders touched by the data layer', () => {
  const folders = new Map<string, string[]>();
  for (const [file, targets] of importGraph()) {
    const from = area(file);
    const set = new Set(folders.get(from) ?? []);
    for (const target of targets) if (area(target) !== from) set.add(area(target));
    folders.set(from, [...set]);
  }
  const watched = new Set(['db', 'http', 'users', 'auth', 'alerts', 'faults', 'maintenance', 'reports', 'audit', 'uploads', 'files', 'errors.ts', 'roles.ts']);
  const folderCycles = cycles(folders).filter((cycle) => cycle.every((node) => watched.has(node)));
  assert.deepEqual(folderCycles, []);
});

test('the data layer imports no feature and no HTTP code; the HTTP layer imports no storage', () => {
  const graph = importGraph();
  const allowedForDb = new Set(['db', 'errors.ts', 'roles.ts', 'packageRoot.ts']);
  for (const [file, targets] of graph) {
    if (area(file) === 'db') for (const target of targets) assert.ok(allowedForDb.has(area(target)), `${file} imports ${target}`);
    if (area(file) === 'http') for (const target of targets) assert.notEqual(area(target), 'db', `${file} imports ${target}`);
  }
});
