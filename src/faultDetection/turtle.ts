// Brick Turtle in: the point model from a Turtle file, as the export writes it (`GET /api/fdd/model.ttl`) or as an
// integrator's Brick tool does in the same terms. Read: @prefix/PREFIX, statements of `subject verb object (, object)*
// (; verb object…)* .`, `a`, IRIs, prefixed names, string literals (typed or tagged), comments. Not read: blank nodes,
// collections, long strings — refused naming their line. What the model takes from the graph:
//   - equipment: a subject `a brick:<AHU|VAV|Chiller|Hot_Water_Loop|HVAC_Zone|Electrical_Meter>` (name: ems:name, else
//     the IRI's local name);
//   - points: a subject with `ems:gatewayCode "<code>"`, `a brick:<class>`, `brick:isPointOf <equipment>` (or the
//     equipment's `brick:hasPoint`), `brick:hasUnit unit:<QUDT>` (EMS's own `ems:unit "<unit>"` first when present).
// Each point becomes the same five fields a CSV line has and is checked the same way; its line is the line its
// statement starts on.

export const BRICK = 'https://brickschema.org/schema/Brick#';
const BRICK_HTTP = 'http://brickschema.org/schema/Brick#';
export const QUDT_UNIT = 'http://qudt.org/vocab/unit/';
export const EMS = 'urn:ems:model#';
const RDF_TYPE = 'http://www.w3.org/1999/02/22-rdf-syntax-ns#type';

type Token = { kind: 'iri' | 'pname' | 'literal' | 'punct' | 'a' | 'prefix'; text: string; line: number };
type Term = { kind: 'iri'; value: string } | { kind: 'literal'; value: string };
type Triple = { s: string; p: string; o: Term; line: number };

export class TurtleError extends Error {
  constructor(
    readonly line: number,
    message: string,
  ) {
    super(message);
  }
}

function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  let line = 1;
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (c === '\n') {
      line++;
      i++;
    } else if (c === ' ' || c === '\t' || c === '\r' || c === '\uFEFF') i++;
    else if (c === '#') while (i < text.length && text[i] !== '\n') i++;
    else if (c === '<') {
      const end = text.indexOf('>', i);
      const iri = end < 0 ? '' : text.slice(i + 1, end);
      if (end < 0 || /[\s<"{}|^`]/.test(iri)) throw new TurtleError(line, 'an IRI <…> is not closed on its line');
      tokens.push({ kind: 'iri', text: iri, line });
      i = end + 1;
    } else if (c === '"' || c === "'") {
      if (text.startsWith(c.repeat(3), i)) throw new TurtleError(line, 'long strings ("""…""") are not read');
      let value = '';
      let j = i + 1;
      for (; j < text.length && text[j] !== c; j++) {
        if (text[j] === '\n') throw new TurtleError(line, 'a string is not closed on its line');
        if (text[j] === '\\') {
          const next = text[++j];
          const escapes: Record<string, string> = { n: '\n', t: '\t', r: '\r', '"': '"', "'": "'", '\\': '\\' };
          if (next === 'u' || next === 'U') {
            const width = next === 'u' ? 4 : 8;
            const hex = text.slice(j + 1, j + 1 + width);
            if (!/^[0-9a-fA-F]+$/.test(hex) || hex.length !== width) throw new TurtleError(line, 'a bad \\u escape in a string');
            value += String.fromCodePoint(Number.parseInt(hex, 16));
            j += width;
          } else if (next !== undefined && escapes[next] !== undefined) value += escapes[next];
          else throw new TurtleError(line, `a bad escape \\${next ?? ''} in a string`);
        } else value += text[j];
      }
      if (j >= text.length) throw new TurtleError(line, 'a string is not closed');
      i = j + 1;
      // A language tag or a datatype: the text is what the model reads.
      if (text[i] === '@') while (i < text.length && /[A-Za-z0-9-@]/.test(text[i]!)) i++;
      else if (text.startsWith('^^', i)) {
        i += 2;
        if (text[i] === '<') i = text.indexOf('>', i) + 1;
        else while (i < text.length && /[^\s;,.]/.test(text[i]!)) i++;
      }
      tokens.push({ kind: 'literal', text: value, line });
    } else if (c === ';' || c === ',' || c === '.') {
      tokens.push({ kind: 'punct', text: c, line });
      i++;
    } else if (c === '[' || c === '(' || c === '_') throw new TurtleError(line, 'blank nodes and collections are not read: name each thing with an IRI');
    else {
      const word = /^[^\s;,<>"']+/.exec(text.slice(i, i + 1000))?.[0] ?? c;
      // A statement's final dot sticks to a prefixed name: "brick:AHU." is "brick:AHU" then ".".
      const name = word.endsWith('.') ? word.slice(0, -1) : word;
      i += name.length || 1;
      if (name === 'a') tokens.push({ kind: 'a', text: name, line });
      else if (name === '@prefix' || /^prefix$/i.test(name)) tokens.push({ kind: 'prefix', text: name, line });
      else if (/^(?:@base|base)$/i.test(name)) throw new TurtleError(line, '@base is not read: use full IRIs or prefixes');
      else if (/^-?[0-9]/.test(name) || name === 'true' || name === 'false') tokens.push({ kind: 'literal', text: name, line });
      else if (/^[A-Za-z][\w.-]*:|^:/.test(name)) tokens.push({ kind: 'pname', text: name, line });
      else throw new TurtleError(line, `unexpected "${name.slice(0, 40)}"`);
    }
  }
  return tokens;
}

/** The triples of a Turtle text; a TurtleError names the line of the first thing it cannot read. */
export function parseTurtle(text: string): Triple[] {
  const tokens = tokenize(text);
  const prefixes = new Map<string, string>();
  const triples: Triple[] = [];
  let k = 0;
  const peek = () => tokens[k];
  const lastLine = () => tokens[tokens.length - 1]?.line ?? 1;
  const take = (): Token => {
    const token = tokens[k++];
    if (!token) throw new TurtleError(lastLine(), 'the file ends inside a statement (a missing "."?)');
    return token;
  };
  const iri = (token: Token): string => {
    if (token.kind === 'iri') return token.text;
    if (token.kind === 'a') return RDF_TYPE;
    if (token.kind !== 'pname') throw new TurtleError(token.line, `expected an IRI or a prefixed name, got "${token.text}"`);
    const colon = token.text.indexOf(':');
    const ns = prefixes.get(token.text.slice(0, colon));
    if (ns === undefined) throw new TurtleError(token.line, `unknown prefix "${token.text.slice(0, colon)}:"`);
    return ns + token.text.slice(colon + 1);
  };
  const expect = (text: string) => {
    const token = take();
    if (token.kind !== 'punct' || token.text !== text) throw new TurtleError(token.line, `expected "${text}", got "${token.text}"`);
  };
  while (k < tokens.length) {
    const first = take();
    if (first.kind === 'prefix') {
      const name = take();
      if (name.kind !== 'pname' || !name.text.endsWith(':')) throw new TurtleError(name.line, 'expected a prefix name ending in ":"');
      const ns = take();
      if (ns.kind !== 'iri') throw new TurtleError(ns.line, 'expected the prefix IRI <…>');
      prefixes.set(name.text.slice(0, -1), ns.text);
      if (first.text === '@prefix') expect('.');
      continue;
    }
    const s = iri(first);
    const line = first.line;
    for (;;) {
      const p = iri(take());
      for (;;) {
        const object = take();
        triples.push({ s, p, o: object.kind === 'literal' ? { kind: 'literal', value: object.text } : { kind: 'iri', value: iri(object) }, line });
        if (peek()?.kind === 'punct' && peek()!.text === ',') {
          k++;
          continue;
        }
        break;
      }
      const next = take();
      if (next.kind !== 'punct' || next.text === ',') throw new TurtleError(next.line, `expected ";" or ".", got "${next.text}"`);
      if (next.text === '.') break;
      // "; ." closes too.
      if (peek()?.kind === 'punct' && peek()!.text === '.') {
        k++;
        break;
      }
    }
  }
  return triples;
}

const local = (value: string, ns: string[]): string | null => {
  for (const prefix of ns) if (value.startsWith(prefix)) return value.slice(prefix.length);
  return null;
};

/**
 * The points of a Brick graph as CSV-like cells [code, equipment, equipmentType, brickClass, unit] with their lines,
 * or the refusals by line. `equipmentTypes` maps Brick's equipment class to EMS's type, `units` QUDT to EMS's unit.
 */
export function pointsFromTurtle(
  text: string,
  equipmentTypes: Record<string, string>,
  units: Record<string, string>,
): { rows: Array<{ line: number; cells: string[] }>; refused: Array<{ line: number; error: string }> } {
  let triples: Triple[];
  try {
    triples = parseTurtle(text);
  } catch (error) {
    if (error instanceof TurtleError) return { rows: [], refused: [{ line: error.line, error: error.message }] };
    throw error;
  }
  type Subject = { line: number; types: string[]; name?: string; code?: string; of?: string; unit?: string; unitIri?: string; emsUnit?: string };
  const subjects = new Map<string, Subject>();
  const subject = (s: string, line: number) => {
    let found = subjects.get(s);
    if (!found) subjects.set(s, (found = { line, types: [] }));
    return found;
  };
  const hasPoint: Array<{ equipment: string; point: string }> = [];
  for (const { s, p, o, line } of triples) {
    const into = subject(s, line);
    if (p === RDF_TYPE && o.kind === 'iri') {
      const brickClass = local(o.value, [BRICK, BRICK_HTTP]);
      if (brickClass) into.types.push(brickClass);
    } else if (p === `${EMS}name` && o.kind === 'literal') into.name = o.value;
    else if (p === `${EMS}gatewayCode` && o.kind === 'literal') into.code = o.value;
    else if (p === `${EMS}unit` && o.kind === 'literal') into.emsUnit = o.value;
    else if ((p === `${BRICK}isPointOf` || p === `${BRICK_HTTP}isPointOf`) && o.kind === 'iri') into.of = o.value;
    else if ((p === `${BRICK}hasPoint` || p === `${BRICK_HTTP}hasPoint`) && o.kind === 'iri') hasPoint.push({ equipment: s, point: o.value });
    else if ((p === `${BRICK}hasUnit` || p === `${BRICK_HTTP}hasUnit`) && o.kind === 'iri') {
      into.unitIri = o.value;
      const qudt = local(o.value, [QUDT_UNIT]);
      if (qudt) into.unit = units[qudt];
    }
  }
  for (const { equipment, point } of hasPoint) subject(point, subjects.get(equipment)!.line).of ??= equipment;
  const nameOf = (iri: string) => subjects.get(iri)?.name ?? iri.replace(/^.*[#/:]/, '').replace(/^equipment_/, '');
  const rows: Array<{ line: number; cells: string[] }> = [];
  const refused: Array<{ line: number; error: string }> = [];
  for (const [iri, point] of subjects) {
    if (point.code === undefined) continue;
    if (!point.of) {
      refused.push({ line: point.line, error: `equipment: ${iri} has no brick:isPointOf` });
      continue;
    }
    const equipment = subjects.get(point.of);
    const type = equipment?.types.map((t) => equipmentTypes[t]).find(Boolean);
    if (!type) {
      refused.push({
        line: point.line,
        error: `equipmentType: ${point.of} is not declared with a Brick equipment class EMS knows (${Object.keys(equipmentTypes).join(', ')})`,
      });
      continue;
    }
    if (point.types.length !== 1) {
      refused.push({ line: point.line, error: `brickClass: ${iri} needs exactly one Brick class, has ${point.types.length}` });
      continue;
    }
    if (point.emsUnit === undefined && point.unitIri !== undefined && point.unit === undefined) {
      refused.push({ line: point.line, error: `unit: ${point.unitIri} is not a QUDT unit EMS reads` });
      continue;
    }
    rows.push({ line: point.line, cells: [point.code, nameOf(point.of), type, point.types[0]!, point.emsUnit ?? point.unit ?? ''] });
  }
  return { rows, refused };
}
