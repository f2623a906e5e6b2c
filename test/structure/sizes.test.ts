// Structure (issue 57 item 3): no class over 400 lines, no function over 120 (route tables and schema files excepted),
// read with the TypeScript parser. What exceeds today is listed in OVERSIZE with its length when the rule came in: the
// list only shrinks. A listed piece that grows fails, one that fits now fails until its entry goes, a new one fails.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import ts from 'typescript';

const SRC = path.resolve(import.meta.dirname, '../../src');
const LIMITS = { class: 400, function: 120 };

/** Route tables (one declaration per route, read as a table) and schema files are not measured. */
function excepted(file: string, name: string): boolean {
  return file.endsWith('/schemas.ts') || file.includes('/schema/') || (file.endsWith('routes.ts') && /Routes$/.test(name));
}

/** `kind file name`: its length in lines when the rule came in. Only ever remove entries, or lower a length. */
const OVERSIZE: Record<string, number> = {};

type Piece = { key: string; lines: number; kind: 'class' | 'function' };

function pieceName(node: ts.Node, file: ts.SourceFile): string {
  const named = (node as { name?: ts.Node }).name;
  if (named) return named.getText(file);
  if (ts.isConstructorDeclaration(node)) return `${(node.parent as ts.ClassDeclaration).name?.getText(file) ?? 'class'}.constructor`;
  if (ts.isVariableDeclaration(node.parent)) return node.parent.name.getText(file);
  if (ts.isPropertyAssignment(node.parent) || ts.isPropertyDeclaration(node.parent)) return node.parent.name.getText(file);
  if (ts.isCallExpression(node.parent)) return `callback of ${node.parent.expression.getText(file)}`;
  const line = file.getLineAndCharacterOfPosition(node.getStart(file)).line + 1;
  return `(anonymous at line ${line})`;
}

export function oversize(root = SRC): Piece[] {
  const found: Piece[] = [];
  const files = fs.readdirSync(root, { recursive: true, encoding: 'utf8' }).filter((f) => /\.tsx?$/.test(f) && !f.endsWith('.d.ts'));
  for (const relative of files.sort()) {
    const text = fs.readFileSync(path.join(root, relative), 'utf8');
    const file = ts.createSourceFile(relative, text, ts.ScriptTarget.Latest, true, relative.endsWith('.tsx') ? ts.ScriptKind.TSX : ts.ScriptKind.TS);
    const lines = (node: ts.Node) => file.getLineAndCharacterOfPosition(node.getEnd()).line - file.getLineAndCharacterOfPosition(node.getStart(file)).line + 1;
    const visit = (node: ts.Node) => {
      const isClass = ts.isClassDeclaration(node) || ts.isClassExpression(node);
      const isFunction =
        (ts.isFunctionDeclaration(node) ||
          ts.isMethodDeclaration(node) ||
          ts.isArrowFunction(node) ||
          ts.isFunctionExpression(node) ||
          ts.isConstructorDeclaration(node)) &&
        node.body !== undefined;
      if (isClass || isFunction) {
        const kind = isClass ? 'class' : 'function';
        const name = pieceName(node, file);
        const length = lines(node);
        if (length > LIMITS[kind] && !excepted(`/${relative}`, name)) found.push({ key: `${kind} ${relative} ${name}`, lines: length, kind });
      }
      ts.forEachChild(node, visit);
    };
    visit(file);
  }
  return found;
}

test(`no class over ${LIMITS.class} lines, no function over ${LIMITS.function} but those listed, and none listed grows`, () => {
  const found = oversize();
  const problems: string[] = [];
  for (const piece of found) {
    const allowed = OVERSIZE[piece.key];
    if (allowed === undefined) problems.push(`${piece.key}: ${piece.lines} lines (at most ${LIMITS[piece.kind]}): split it`);
    else if (piece.lines > allowed) problems.push(`${piece.key}: ${piece.lines} lines, grown from ${allowed}: split it rather than add to it`);
  }
  const still = new Set(found.map((piece) => piece.key));
  for (const key of Object.keys(OVERSIZE))
    if (!still.has(key)) problems.push(`${key} is within the limit now (or gone): remove its entry from OVERSIZE, the list only shrinks`);
  assert.deepEqual(problems, []);
});

test('the measure sees a long class and a long function, and leaves route tables and schema files alone', () => {
  const dir = fs.mkdtempSync(path.join(SRC, '..', '.tmp-sizes-'));
  try {
    const body = (n: number) => Array.from({ length: n }, (_, i) => `  const v${i} = ${i};`).join('\n');
    fs.writeFileSync(path.join(dir, 'long.ts'), `export class Long {\n  m() {\n${body(410)}\n  }\n}\nexport function short() {\n${body(10)}\n}\n`);
    fs.mkdirSync(path.join(dir, 'ctx'));
    fs.writeFileSync(path.join(dir, 'ctx', 'routes.ts'), `export function ctxRoutes() {\n${body(200)}\n}\n`);
    fs.writeFileSync(path.join(dir, 'ctx', 'schemas.ts'), `export const make = () => {\n${body(200)}\n};\n`);
    const keys = oversize(dir).map((piece) => piece.key);
    assert.deepEqual(keys.sort(), ['class long.ts Long', 'function long.ts m']);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
