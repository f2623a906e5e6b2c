// Structure (issue 57 item 2): the staff app's screens take the API's answers from the generated schema
// (src/web/app/api/types.ts over schema.d.ts), never re-declared by hand. An object type declared in screens/ or
// state/ whose fields (three or more) all belong to one object of the generated schema, each with the schema's type
// (or `string` for a string enum, or a named type), is such a re-declaration: import it from api/types.ts instead.
// Form state is not: it has fields the API lacks, or holds the typed text (`price: string` for a number).
// The same holds for an object type written inline (`useState<{…}>`, a parameter's type). And a screen casts to a
// type with a name, never to an object type written out (`error as { error: string }`, a window message `as {…}`):
// the generated schema's (api/types.ts) or one the screen declares for its form.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import ts from 'typescript';

const APP = path.resolve(import.meta.dirname, '../../src/web/app');
const MIN_FIELDS = 3;
/** Declared by hand because the schema has no type to give: `file name` and why. */
const KNOWN: Record<string, string> = {
  'screens/DeskMeasures.tsx Stats': "the measures answer types its baseline's statistics as an open object",
};

function parse(file: string, text = fs.readFileSync(file, 'utf8')): ts.SourceFile {
  return ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, file.endsWith('x') ? ts.ScriptKind.TSX : ts.ScriptKind.TS);
}

type Shape = Map<string, string>;
const norm = (type: string) =>
  type
    .replace(/\s+/g, ' ')
    .replace(/'/g, '"')
    .replace(/^\((.*)\)$/, '$1');

const nameOf = (member: ts.PropertySignature) => member.name.getText().replace(/^"|"$/g, '');

/**
 * A type as text that two spellings of one type share: an object's fields sorted by name (its comments left out),
 * `Array<T>` as `T[]`, without parentheses. So a nested object written out by hand matches the schema's.
 */
function typeText(node: ts.TypeNode | undefined): string {
  if (!node) return 'unknown';
  if (ts.isParenthesizedTypeNode(node)) return typeText(node.type);
  if (ts.isArrayTypeNode(node)) return `${typeText(node.elementType)}[]`;
  if (ts.isTypeReferenceNode(node) && node.typeName.getText() === 'Array' && node.typeArguments?.length === 1) return `${typeText(node.typeArguments[0])}[]`;
  if (ts.isUnionTypeNode(node)) return node.types.map(typeText).join(' | ');
  if (ts.isTypeLiteralNode(node)) {
    const fields = node.members.filter(ts.isPropertySignature).map((m) => `${nameOf(m)}${m.questionToken ? '?' : ''}: ${typeText(m.type)}`);
    return `{ ${fields.sort().join('; ')} }`;
  }
  return norm(node.getText());
}

/** Field → type text of an object type. */
function fieldsOf(members: ts.NodeArray<ts.TypeElement>): Shape {
  const fields: Shape = new Map();
  for (const member of members) {
    if (ts.isPropertySignature(member)) fields.set(nameOf(member), typeText(member.type));
  }
  return fields;
}

/** A local field's type is the schema's: the same text, `string` for a string enum, or a named (imported) type. */
function sameType(local: string, api: string): boolean {
  return local === api || (local === 'string' && /^"[^"]*"( \| "[^"]*")*( \| null)?$/.test(api)) || /^[A-Z]\w*(\[\])?( \| null)?$/.test(local);
}

/** The fields of every object type in a generated schema (answers, bodies, their nested objects): the site's, or the fleet's. */
function apiShapes(schema = 'api/schema.d.ts'): Shape[] {
  const shapes: Shape[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isTypeLiteralNode(node)) {
      const fields = fieldsOf(node.members);
      if (fields.size >= MIN_FIELDS) shapes.push(fields);
    }
    ts.forEachChild(node, visit);
  };
  visit(parse(path.join(APP, schema)));
  return shapes;
}

/** Whether a node sits inside a declared type (an alias or interface: checked as a whole, nested objects by their text). */
const inDeclaration = (node: ts.Node): boolean =>
  !!node.parent && (ts.isTypeAliasDeclaration(node.parent) || ts.isInterfaceDeclaration(node.parent) || inDeclaration(node.parent));

/**
 * `name (file:line)` of each object type declared in the source whose fields all belong to one API shape; an object
 * type written inline (a type argument, a parameter's type, a cast) is named `inline`.
 */
export function apiShapesDeclared(source: ts.SourceFile, shapes: Shape[]): string[] {
  const found: string[] = [];
  const visit = (node: ts.Node) => {
    const inline = ts.isTypeLiteralNode(node) && !inDeclaration(node);
    const declared = ts.isTypeAliasDeclaration(node) ? node.type : ts.isInterfaceDeclaration(node) ? node : inline ? node : undefined;
    if (declared && (ts.isTypeLiteralNode(declared) || ts.isInterfaceDeclaration(declared))) {
      const fields = [...fieldsOf(declared.members)];
      const api = (shape: Shape) => fields.every(([field, type]) => shape.has(field) && sameType(type, shape.get(field) as string));
      if (fields.length >= MIN_FIELDS && shapes.some(api)) {
        const line = source.getLineAndCharacterOfPosition(node.getStart()).line + 1;
        const name = inline ? 'inline' : (node as ts.TypeAliasDeclaration).name.text;
        if (!(`${path.relative(APP, source.fileName)} ${name}` in KNOWN)) found.push(`${name} (${path.relative(APP, source.fileName)}:${line})`);
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** `file:line` of each cast to an object type written out (`x as { error: string }`, `<{ … }>x`). */
export function objectCasts(source: ts.SourceFile): string[] {
  const found: string[] = [];
  const visit = (node: ts.Node) => {
    if ((ts.isAsExpression(node) || ts.isTypeAssertionExpression(node) || ts.isSatisfiesExpression(node)) && ts.isTypeLiteralNode(node.type))
      found.push(`${path.relative(APP, source.fileName)}:${source.getLineAndCharacterOfPosition(node.getStart()).line + 1}`);
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

const files = (dir: string) =>
  fs
    .readdirSync(path.join(APP, dir), { recursive: true, encoding: 'utf8' })
    .filter((file) => /\.tsx?$/.test(file) && !file.endsWith('.d.ts'))
    .map((file) => path.join(APP, dir, file));

test('no screen or state module declares an API answer by hand: they import it from api/types.ts', () => {
  const shapes = apiShapes();
  assert.ok(shapes.length > 500, `the generated schema's object types were read (${shapes.length})`);
  const found = [...files('screens'), ...files('state')].flatMap((file) => apiShapesDeclared(parse(file), shapes));
  assert.deepEqual(found, [], 'import these from src/web/app/api/types.ts (Answer<path, method>) instead of declaring them');
});

test("no fleet screen declares a fleet API answer by hand: they take it from fleet/types.ts (the fleet's api.d.ts)", () => {
  const shapes = apiShapes('fleet/api.d.ts');
  assert.ok(shapes.length > 50, `the fleet schema's object types were read (${shapes.length})`);
  const found = files('fleet').flatMap((file) => apiShapesDeclared(parse(file), shapes));
  assert.deepEqual(found, [], 'take these from src/web/app/fleet/types.ts (generated from the fleet OpenAPI document) instead of declaring them');
});

test('the rule sees a hand-written alert and leaves form state alone', () => {
  const shapes = apiShapes();
  const source = parse(
    '/x/screens/Example.tsx',
    `type Alert = { id: number; title: string; level: 'info' | 'warning' | 'critical'; occurredAt: string };
     interface Person { id: number; username: string; email: string }
     type Form = { title: string; level: string; draftNote: string };
     type Typed = { id: string; title: string; occurredAt: string };
     type Pair = { id: number; title: string };
     type Replay = {
       episodes: Array<{ equipment: string; startedAt: string; lastSeenAt: string; endedAt: string | null; wasteKwh: number; wasteMoney: number }>;
       currency: string;
       cannotRun: string[];
     };
     type Trial = { episodes: Array<{ equipment: string; startedAt: string; note: string }>; currency: string; cannotRun: string[] };`,
  );
  // A nested object written out by hand (Array<{…}>, its fields in another order) is the schema's all the same.
  assert.deepEqual(
    apiShapesDeclared(source, shapes).map((entry) => entry.split(' ')[0]),
    ['Alert', 'Person', 'Replay'],
  );
  // Written inline: a state's type argument or a parameter's type is an answer too; typed text is still form state.
  const inline = parse(
    '/x/screens/Inline.tsx',
    `const [sent, setSent] = useState<{ delivery: 'sent' | 'logged' | 'failed'; to: string; error: string | null } | null>(null);
     function Row({ alert }: { alert: { id: number; title: string; occurredAt: string } }) {}
     const [form, setForm] = useState<{ id: string; title: string; occurredAt: string }>(empty);`,
  );
  assert.deepEqual(
    apiShapesDeclared(inline, shapes).map((entry) => entry.split(' ')[0]),
    ['inline', 'inline'],
  );
});

test('no screen casts to an object type written out: a cast names its type', () => {
  const found = files('screens').flatMap((file) => objectCasts(parse(file)));
  assert.deepEqual(found, [], 'name the type: the generated one from api/types.ts, or a declared form type');
  const casts = parse(
    '/x/screens/Casts.tsx',
    `if ('error' in error) setRefusal(error as { error: string });
     const outcome = event.data as { status?: string; accessToken?: string };
     const form = draft.values as Form;
     const kind = e.currentTarget.value as Form['kind'];`,
  );
  const at = path.relative(APP, '/x/screens/Casts.tsx');
  assert.deepEqual(objectCasts(casts), [`${at}:1`, `${at}:2`]);
});
