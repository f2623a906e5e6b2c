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

/** The context of a src file: its top folder (`metering`, `platform`, `app`), or the file itself at the top (`main.ts`). */
const area = (file: string) => (file.includes('/') ? file.slice(0, file.indexOf('/')) : file);

/**
 * The declared dependencies between contexts: what each may import (type imports included), a graph with no circle. A
 * context's face and module.ts name what it uses of these; anything else it needs from a context not listed here comes
 * as a port the composition root hands in (the site's settings, the users row's avatar columns, metering's
 * restatement for pricing's tariff routes…: docs/development.md). Issue 57 item 4 replaced the one strict line of
 * LAYERS with this graph: a context may now depend on exactly what it uses, and an edge no import uses leaves the list.
 * A new context, or a new dependency, takes its place here; the test below checks the graph has no circle.
 */
const DEPENDS: Record<string, readonly string[]> = {
  platform: [],
  gateway: ['platform'],
  pricing: ['platform'],
  files: ['platform'],
  facility: ['platform', 'gateway'],
  metering: ['platform', 'gateway', 'pricing', 'facility'],
  access: ['platform', 'files'],
  site: ['platform', 'access', 'metering'],
  energy: ['platform', 'pricing', 'facility', 'metering', 'site'],
  analysis: ['platform', 'gateway', 'pricing', 'facility', 'metering', 'site', 'energy'],
  billing: ['platform', 'pricing', 'facility', 'metering', 'energy', 'analysis'],
  faultDetection: ['platform', 'gateway', 'facility', 'site'],
  fleetSync: ['platform', 'pricing', 'metering'],
  operations: ['platform', 'gateway', 'facility', 'metering', 'site', 'energy', 'analysis', 'fleetSync'],
  reporting: ['platform', 'files', 'facility', 'metering', 'site', 'energy', 'analysis'],
  screens: ['platform', 'gateway', 'facility', 'metering', 'site', 'energy', 'analysis', 'operations'],
  web: ['platform', 'site'],
  fleet: ['platform', 'access', 'web'],
  app: [
    'platform',
    'gateway',
    'pricing',
    'files',
    'facility',
    'metering',
    'access',
    'site',
    'energy',
    'analysis',
    'billing',
    'faultDetection',
    'fleetSync',
    'operations',
    'reporting',
    'screens',
    'web',
  ],
  'main.ts': ['platform', 'app'],
};

/** The contexts' import edges as the source has them: `from → to`, across contexts only. */
function contextEdges(graph: Map<string, string[]>): Set<string> {
  const edges = new Set<string>();
  for (const [file, targets] of graph) for (const target of targets) if (area(target) !== area(file)) edges.add(`${area(file)} → ${area(target)}`);
  return edges;
}

test('no import cycle between files', () => {
  assert.deepEqual(cycles(importGraph()), []);
});

test('the declared dependencies between contexts form no circle', () => {
  const declared = new Map(Object.entries(DEPENDS).map(([context, uses]) => [context, [...uses]]));
  assert.deepEqual(cycles(declared), []);
  const unknown = Object.values(DEPENDS)
    .flat()
    .filter((context) => !(context in DEPENDS));
  assert.deepEqual(unknown, [], 'a dependency names a context of the graph');
  // The check finds a circle where there is one.
  assert.equal(cycles(new Map([...declared, ['platform', ['app']]])).length > 0, true);
});

test('every src folder is a context of the graph, and a context imports only the contexts it declares', () => {
  const graph = importGraph();
  const unknown = [...new Set([...graph.keys()].map(area))].filter((context) => !(context in DEPENDS));
  assert.deepEqual(unknown, [], 'a new top-level folder or file of src/ takes its place in DEPENDS');
  const undeclared: string[] = [];
  for (const [file, targets] of graph)
    for (const target of targets) if (area(target) !== area(file) && !DEPENDS[area(file)]!.includes(area(target))) undeclared.push(`${file} imports ${target}`);
  assert.deepEqual(undeclared, [], 'declare the dependency in DEPENDS (if it makes no circle), or hand the context a port');
  const used = contextEdges(graph);
  const unused = Object.entries(DEPENDS).flatMap(([context, uses]) => uses.filter((to) => !used.has(`${context} → ${to}`)).map((to) => `${context} → ${to}`));
  assert.deepEqual(unused, [], 'a dependency no import uses any more leaves DEPENDS');
});

test('outside a context, code imports only its face (index.ts); the platform, the floor, is imported by folder', () => {
  // Dynamic imports (lazy modules) and worker entry URLs are not in the graph: they name the file they load on purpose.
  const deep: string[] = [];
  for (const [file, targets] of importGraph())
    for (const target of targets) {
      const context = area(target);
      if (context === area(file) || context === 'platform' || !target.includes('/')) continue;
      if (target !== `${context}/index.ts`) deep.push(`${file} imports ${target} (import it from ${context}/index.ts)`);
    }
  assert.deepEqual(deep, []);
});

/**
 * emsctl (cli/) → the src files it loads, each with the importing file: static imports and exports, and the lazy
 * `import('…')` by which emsctl loads a command's code only when that command runs.
 */
export function cliImports(root: string): { file: string; target: string }[] {
  const found: { file: string; target: string }[] = [];
  for (const file of sourceFiles(root)) {
    const text = fs.readFileSync(file, 'utf8');
    for (const match of text.matchAll(/(?:(?:import|export)\s[^'";]*?from\s+|import\(\s*)'(\.[^']+)'/g)) {
      const target = path.relative(SRC, path.resolve(path.dirname(file), match[1]));
      if (!target.startsWith('..')) found.push({ file: path.relative(path.dirname(root), file), target });
    }
  }
  return found;
}

/**
 * The face rule for emsctl: a context only through its face, index.ts, or the narrow face `cli.ts` a context keeps for
 * emsctl alone (re-exports of what its commands use, so a command loads a few files, not the module and its routes:
 * index.ts would load most of the service, and `emsctl status` has a 500 ms budget, docs/performance-edge.md); the
 * platform, the floor, by folder.
 */
export function cliFaceViolations(root: string): string[] {
  return cliImports(root)
    .filter(({ target }) => area(target) !== 'platform' && target !== `${area(target)}/index.ts` && target !== `${area(target)}/cli.ts`)
    .map(({ file, target }) => `${file} imports ${target} (import it from ${area(target)}/index.ts or ${area(target)}/cli.ts)`);
}

test('cli/ (emsctl) imports a context only through its face (index.ts, or its cli.ts face), static and lazy imports alike', () => {
  const cli = path.resolve(SRC, '../cli');
  assert.ok(
    cliImports(cli).some(({ target }) => target === 'operations/cli.ts'),
    'the rule sees the lazy imports',
  );
  assert.deepEqual(cliFaceViolations(cli), []);
  // A cli.ts face is emsctl's alone: inside src/ the face is index.ts (the rule above).
  const inside = [...importGraph()].flatMap(([file, targets]) => targets.filter((target) => /^[^/]+\/cli\.ts$/.test(target) && area(target) !== area(file)));
  assert.deepEqual(inside, []);
});

test('the cli face rule catches a command that reaches into a context', () => {
  const dir = fs.mkdtempSync(path.join(SRC, '..', '.tmp-cli-'));
  try {
    fs.mkdirSync(path.join(dir, 'commands'));
    fs.writeFileSync(
      path.join(dir, 'commands', 'bad.ts'),
      "import type { Db } from '../../src/platform/db/client.ts';\nimport { x } from '../../src/site/index.ts';\n" +
        "export async function run() {\n  const { listBackups } = await import('../../src/operations/backup/archive.ts');\n" +
        "  const { syncState } = await import('../../src/fleetSync/cli.ts');\n}\nexport { y } from '../../src/access/users/service.ts';\n",
    );
    const name = path.basename(dir);
    assert.deepEqual(cliFaceViolations(dir).sort(), [
      `${name}/commands/bad.ts imports access/users/service.ts (import it from access/index.ts or access/cli.ts)`,
      `${name}/commands/bad.ts imports operations/backup/archive.ts (import it from operations/index.ts or operations/cli.ts)`,
    ]);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('route tables and modules declare their own needs: nothing outside src/app names AppDeps or imports appDeps.ts', () => {
  // AppDeps is the composition root's bag of every service (what tests reach through service.deps); a route table or a
  // module typed by it would depend on every context at once, type imports included.
  const offenders: string[] = [];
  const roots = [SRC, path.resolve(SRC, '../cli')];
  for (const root of roots)
    for (const file of sourceFiles(root)) {
      const relative = path.relative(SRC, file);
      if (relative.startsWith('app/')) continue;
      const text = fs.readFileSync(file, 'utf8');
      if (/\bAppDeps\b/.test(text) || /from\s+'[^']*appDeps(\.ts)?'/.test(text)) offenders.push(relative);
    }
  assert.deepEqual(offenders, []);
  assert.match(fs.readFileSync(path.join(SRC, 'app/appDeps.ts'), 'utf8'), /export type AppDeps\b/, 'the rule still names the type it keeps out');
});

test('no import cycle between any two folders, type imports included', () => {
  const folders = new Map<string, Set<string>>();
  for (const [file, targets] of importGraph()) {
    const from = path.dirname(file);
    const set = folders.get(from) ?? new Set<string>();
    for (const target of targets) if (path.dirname(target) !== from) set.add(path.dirname(target));
    folders.set(from, set);
  }
  const graph = new Map([...folders].map(([folder, targets]) => [folder, [...targets]]));
  assert.deepEqual(cycles(graph), []);
});

test('the data layer imports no feature and no HTTP code; the HTTP layer imports no storage', () => {
  const graph = importGraph();
  const within = (file: string, folder: string) => file.startsWith(`${folder}/`);
  for (const [file, targets] of graph) {
    if (within(file, 'platform/db'))
      for (const target of targets)
        assert.ok(
          within(target, 'platform/db') ||
            ['platform/errors.ts', 'platform/roles.ts', 'platform/packageRoot.ts', 'platform/workerThread.ts', 'platform/requestTurn.ts'].includes(target),
          `${file} imports ${target}`,
        );
    if (within(file, 'platform/http')) for (const target of targets) assert.ok(!within(target, 'platform/db'), `${file} imports ${target}`);
  }
});
