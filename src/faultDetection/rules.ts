// Rules as data: the expression language a rule's condition, derived values and waste are written in, its check (every
// bad node named by its path), its compilation to closures, and the operating modes a rule applies in.
import type { ErrorDetail } from '../platform/errors.ts';
import { compileBody } from '../platform/http/validation.ts';
import { BRICK_CLASSES } from './brick.ts';
import { RuleDefinition, type MODES, type RuleDefinitionView } from './schemas.ts';

export type Mode = (typeof MODES)[number];

const OPS = {
  and: [1, 8],
  or: [1, 8],
  not: [1, 1],
  gt: [2, 2],
  ge: [2, 2],
  lt: [2, 2],
  le: [2, 2],
  eq: [2, 2],
  add: [2, 8],
  sub: [2, 2],
  mul: [2, 8],
  div: [2, 2],
  abs: [1, 1],
  min: [1, 8],
  max: [1, 8],
  if: [3, 3],
} as const satisfies Record<string, readonly [number, number]>;
type Op = keyof typeof OPS;
export const WINDOW_FNS = ['span', 'transitions', 'mean'] as const;
type WindowFn = (typeof WINDOW_FNS)[number];

/** What an expression reads when it runs: the inputs' and lets' values by slot, the params, the windows, the hour. */
export type Scope = {
  values: Float64Array;
  params: Record<string, number>;
  window(slot: number, fn: WindowFn, minutes: number): number;
  hour: number;
};
export type Compiled = (scope: Scope) => number;

const MAX_DEPTH = 16;

/** Checks a node and below; pushes one detail per bad node. `names`: inputs and lets visible here; `inputs`: the windowable ones. */
export function checkExpression(
  node: unknown,
  path: string,
  names: ReadonlySet<string>,
  inputs: ReadonlySet<string>,
  params: ReadonlySet<string>,
  errors: ErrorDetail[],
  depth = 0,
): void {
  if (depth > MAX_DEPTH) return void errors.push({ path, message: `nested deeper than ${MAX_DEPTH}` });
  if (typeof node === 'number') {
    if (!Number.isFinite(node)) errors.push({ path, message: 'must be a finite number' });
    return;
  }
  if (!node || typeof node !== 'object' || Array.isArray(node))
    return void errors.push({ path, message: 'must be a number or an object {p}, {param}, {op, args} or {fn}' });
  const o = node as Record<string, unknown>;
  const keys = Object.keys(o).sort().join(',');
  if (keys === 'p') {
    if (typeof o.p !== 'string' || !names.has(o.p))
      errors.push({ path: `${path}.p`, message: `names no input or earlier let: ${String(o.p)} (known: ${[...names].join(', ')})` });
    return;
  }
  if (keys === 'param') {
    if (typeof o.param !== 'string' || !params.has(o.param)) errors.push({ path: `${path}.param`, message: `is not in the rule's params: ${String(o.param)}` });
    return;
  }
  if (keys === 'args,op') {
    const arity = OPS[o.op as Op];
    if (!arity) return void errors.push({ path: `${path}.op`, message: `must be one of ${Object.keys(OPS).join(', ')}` });
    if (!Array.isArray(o.args) || o.args.length < arity[0] || o.args.length > arity[1])
      return void errors.push({ path: `${path}.args`, message: `${String(o.op)} takes ${arity[0]} to ${arity[1]} arguments` });
    for (const [i, arg] of o.args.entries()) checkExpression(arg, `${path}.args[${i}]`, names, inputs, params, errors, depth + 1);
    return;
  }
  if (keys === 'fn' && o.fn === 'hour') return;
  if (keys === 'fn,minutes,p') {
    if (!WINDOW_FNS.includes(o.fn as WindowFn)) errors.push({ path: `${path}.fn`, message: `must be one of ${WINDOW_FNS.join(', ')} or hour` });
    if (typeof o.p !== 'string' || !inputs.has(o.p)) errors.push({ path: `${path}.p`, message: `a window reads an input: ${String(o.p)}` });
    if (!Number.isInteger(o.minutes) || (o.minutes as number) < 5 || (o.minutes as number) > 24 * 60)
      errors.push({ path: `${path}.minutes`, message: 'must be an integer from 5 to 1440' });
    return;
  }
  errors.push({ path, message: 'must be a number or an object {p}, {param}, {op, args}, {fn, p, minutes} or {fn: "hour"}' });
}

const ruleShape = compileBody(RuleDefinition);

/** A rule's definition checked whole: its shape (TypeBox), its classes, and every expression; [] when it is sound. */
export function checkRule(definition: unknown, prefix = 'body'): ErrorDetail[] {
  const shapeErrors = ruleShape(definition);
  if (shapeErrors) return shapeErrors.map((e) => ({ path: e.path === '(root)' ? prefix : `${prefix}.${e.path}`, message: e.message }));
  const rule = definition as RuleDefinitionView;
  const errors: ErrorDetail[] = [];
  for (const [name, brickClass] of Object.entries(rule.inputs))
    if (!(brickClass in BRICK_CLASSES)) errors.push({ path: `${prefix}.inputs.${name}`, message: `unknown Brick class ${brickClass}` });
  const inputs = new Set(Object.keys(rule.inputs));
  const names = new Set(inputs);
  const params = new Set(rule.params ?? []);
  for (const [name, expression] of Object.entries(rule.let ?? {})) {
    if (names.has(name)) errors.push({ path: `${prefix}.let.${name}`, message: 'a let may not reuse an input or let name' });
    checkExpression(expression, `${prefix}.let.${name}`, names, inputs, params, errors);
    names.add(name);
  }
  checkExpression(rule.condition, `${prefix}.condition`, names, inputs, params, errors);
  checkExpression(rule.waste.kw, `${prefix}.waste.kw`, names, inputs, params, errors);
  return errors;
}

/** Compiles a checked expression: `slots` maps an input or let name to its place in Scope.values. */
export function compile(node: unknown, slots: ReadonlyMap<string, number>): Compiled {
  if (typeof node === 'number') return () => node;
  const o = node as Record<string, unknown>;
  if ('param' in o) {
    const name = o.param as string;
    return (s) => s.params[name] ?? Number.NaN;
  }
  if ('fn' in o) {
    if (o.fn === 'hour') return (s) => s.hour;
    const slot = slots.get(o.p as string)!;
    const fn = o.fn as WindowFn;
    const minutes = o.minutes as number;
    return (s) => s.window(slot, fn, minutes);
  }
  if ('p' in o) {
    const slot = slots.get(o.p as string)!;
    return (s) => s.values[slot]!;
  }
  const args = (o.args as unknown[]).map((arg) => compile(arg, slots));
  const [a, b, c] = args as [Compiled, Compiled, Compiled];
  const truth = (x: number) => (x !== 0 && !Number.isNaN(x) ? 1 : 0);
  switch (o.op as Op) {
    case 'and':
      return (s) => (args.every((f) => truth(f(s))) ? 1 : 0);
    case 'or':
      return (s) => (args.some((f) => truth(f(s))) ? 1 : 0);
    case 'not':
      return (s) => 1 - truth(a(s));
    case 'gt':
      return (s) => (a(s) > b(s) ? 1 : 0);
    case 'ge':
      return (s) => (a(s) >= b(s) ? 1 : 0);
    case 'lt':
      return (s) => (a(s) < b(s) ? 1 : 0);
    case 'le':
      return (s) => (a(s) <= b(s) ? 1 : 0);
    case 'eq':
      return (s) => (Math.abs(a(s) - b(s)) < 1e-9 ? 1 : 0);
    case 'add':
      return (s) => args.reduce((sum, f) => sum + f(s), 0);
    case 'sub':
      return (s) => a(s) - b(s);
    case 'mul':
      return (s) => args.reduce((product, f) => product * f(s), 1);
    case 'div':
      return (s) => a(s) / b(s);
    case 'abs':
      return (s) => Math.abs(a(s));
    case 'min':
      return (s) => Math.min(...args.map((f) => f(s)));
    case 'max':
      return (s) => Math.max(...args.map((f) => f(s)));
    case 'if':
      return (s) => (truth(a(s)) ? b(s) : c(s));
  }
}

/**
 * The operating modes, as data like the rules: the classes each reads on the equipment and its test (G36's AHU operating
 * states: OS#1 heating, OS#2 free cooling with both valves shut, OS#3/4 mechanical cooling).
 */
export const MODE_DEFINITIONS: Record<Mode, { inputs: Record<string, string>; test: unknown }> = {
  any: { inputs: {}, test: 1 },
  fan_on: { inputs: { sf: 'Supply_Fan_Status' }, test: { op: 'ge', args: [{ p: 'sf' }, 0.5] } },
  occupied: { inputs: { occ: 'Occupancy_Command' }, test: { op: 'ge', args: [{ p: 'occ' }, 0.5] } },
  unoccupied: { inputs: { occ: 'Occupancy_Command' }, test: { op: 'lt', args: [{ p: 'occ' }, 0.5] } },
  heating: {
    inputs: { sf: 'Supply_Fan_Status', hcv: 'Heating_Valve' },
    test: {
      op: 'and',
      args: [
        { op: 'ge', args: [{ p: 'sf' }, 0.5] },
        { op: 'gt', args: [{ p: 'hcv' }, 1] },
      ],
    },
  },
  cooling: {
    inputs: { sf: 'Supply_Fan_Status', ccv: 'Cooling_Valve' },
    test: {
      op: 'and',
      args: [
        { op: 'ge', args: [{ p: 'sf' }, 0.5] },
        { op: 'gt', args: [{ p: 'ccv' }, 1] },
      ],
    },
  },
  economiser: {
    inputs: { sf: 'Supply_Fan_Status', hcv: 'Heating_Valve', ccv: 'Cooling_Valve' },
    test: {
      op: 'and',
      args: [
        { op: 'ge', args: [{ p: 'sf' }, 0.5] },
        { op: 'le', args: [{ p: 'hcv' }, 1] },
        { op: 'le', args: [{ p: 'ccv' }, 1] },
      ],
    },
  },
  night: {
    inputs: {},
    test: {
      op: 'or',
      args: [
        { op: 'lt', args: [{ fn: 'hour' }, 6] },
        { op: 'ge', args: [{ fn: 'hour' }, 20] },
      ],
    },
  },
};
