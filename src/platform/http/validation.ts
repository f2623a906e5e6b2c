// ajv instances: params/query coerce strings, bodies do not, responses strip every field their schema does not list.
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { TSchema } from '@sinclair/typebox';
import type { ErrorDetail } from '../errors.ts';
import { DISPLAY_FORBIDDEN, DISPLAY_TEXT_RULE } from './schemas.ts';

// ajv-formats ships CommonJS with a default export; under NodeNext the callable sits on .default.
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (
  ajv: Ajv,
  options?: { mode?: 'full' | 'fast' },
) => Ajv;

/**
 * RFC 3339 as the service means it: seconds 00-59 and a full ±hh:mm offset. ajv's full check accepts a leap second
 * (…T23:59:60Z) and `+01`, which Date.parse turns into NaN: input must be a time the service can compute with.
 */
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.\d{1,9})?(?:Z|[+-](\d{2}):(\d{2}))$/i;
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

/**
 * A real calendar day: Date.parse moves 2026-02-30 to 2 March and reads T24:00:00 as the next midnight, so the parts
 * are checked themselves (hours 00-23, minutes and seconds 00-59, offsets within ±23:59).
 */
function realDay(year: number, month: number, day: number): boolean {
  if (month < 1 || month > 12 || day < 1) return false;
  return day <= new Date(Date.UTC(2000, month, 0)).getUTCDate() - (month === 2 && !leapYear(year) ? 1 : 0);
}
const leapYear = (year: number) => (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;

const isDateTime = (value: string) => {
  const parts = DATE_TIME.exec(value);
  if (!parts) return false;
  const [, year, month, day, hour, minute, second, offsetHour, offsetMinute] = parts.map((part) => Number(part ?? 0));
  return (
    realDay(year, month, day) && hour <= 23 && minute <= 59 && second <= 59 && offsetHour <= 23 && offsetMinute <= 59 && Number.isFinite(Date.parse(value))
  );
};
const isDate = (value: string) => {
  const parts = DATE.exec(value);
  return parts !== null && realDay(Number(parts[1]), Number(parts[2]), Number(parts[3]));
};

function build(options: ConstructorParameters<typeof Ajv>[0], formatMode: 'full' | 'fast' = 'full'): Ajv {
  const ajv = new Ajv({ allErrors: false, strict: false, ...options });
  addFormats(ajv, { mode: formatMode });
  if (formatMode === 'full') {
    ajv.addFormat('date-time', { type: 'string', validate: isDateTime });
    ajv.addFormat('date', { type: 'string', validate: isDate });
  }
  // A `from`/`to` bound: a date-time or a plain date, one format so a bad value gets one message.
  ajv.addFormat('date-time-or-date', { type: 'string', validate: (value: string) => isDateTime(value) || isDate(value) });
  // TypeBox marks schemas with symbols and a few keywords ajv does not know; they carry no validation meaning.
  return ajv;
}

const paramsAjv = build({ coerceTypes: 'array', useDefaults: true, removeAdditional: true });
// One rule for unknown fields in every body: they are dropped (whatever the schema's additionalProperties says), and a
// partial update left with no known field is refused below, so `{ "foo": 1 }` never reaches a service as a change.
const bodyAjv = build({ coerceTypes: false, useDefaults: true, removeAdditional: 'all' });
// The exception: a body whose schema says REFUSE_UNKNOWN_FIELDS (schemas.ts) answers 400 naming an unknown field instead of dropping
// it (issue 51: a misspelt contact e-mail of a tenant, or a misspelt line of a supplier bill, must not vanish silently).
const strictBodyAjv = build({ coerceTypes: false, useDefaults: true, removeAdditional: false });
// Responses check formats by shape only ('fast'): 'full' parses every date-time to reject e.g. Feb 30, which costs
// ~2.5 µs per timestamp (50 µs for a page of 20 alerts, half the route's time). Input keeps the full check; what we
// answer comes from our own toISOString() values, and field stripping is unchanged.
const responseAjv = build({ coerceTypes: false, useDefaults: false, removeAdditional: 'all' }, 'fast');

export type Validator = (value: unknown) => ErrorDetail[] | null;

const cache = new Map<string, WeakMap<TSchema, ValidateFunction>>();

function compiled(kind: 'params' | 'body' | 'strictBody' | 'response', ajv: Ajv, schema: TSchema): ValidateFunction {
  let byKind = cache.get(kind);
  if (!byKind) cache.set(kind, (byKind = new WeakMap()));
  let fn = byKind.get(schema);
  if (!fn) {
    fn = ajv.compile(schema);
    byKind.set(schema, fn);
  }
  return fn;
}

/**
 * Compiled on first use: compiling every route's schemas up front took ~0.45 s of a ~1.2 s cold start, for routes a
 * given appliance may never see. test/ops/hotPath.test.ts compiles them all, so a schema ajv rejects still fails a test.
 */
function compile(kind: 'params' | 'body' | 'strictBody' | 'response', ajv: Ajv, schema: TSchema): Validator {
  let validate: ValidateFunction | undefined;
  return (value) => {
    validate ??= compiled(kind, ajv, schema);
    return validate(value) ? null : toDetails(validate.errors ?? []);
  };
}

/**
 * Query strings coerce to numbers through `+value`, which also reads `Infinity`, `0x10` and `1e3`: numeric
 * parameters must be written as plain decimals before ajv coerces them.
 */
const DECIMAL = /^-?\d+(\.\d+)?$/;

function numericKeys(schema: TSchema): Set<string> {
  const keys = new Set<string>();
  for (const [key, property] of Object.entries((schema.properties ?? {}) as Record<string, TSchema>)) {
    const type = property.type === 'array' ? (property.items as TSchema | undefined)?.type : property.type;
    if (type === 'integer' || type === 'number') keys.add(key);
  }
  return keys;
}

export function compileParams(schema: TSchema): Validator {
  const validate = compile('params', paramsAjv, schema);
  const numeric = numericKeys(schema);
  return (value) => {
    if (numeric.size > 0 && typeof value === 'object' && value !== null) {
      for (const key of numeric) {
        const raw = (value as Record<string, unknown>)[key];
        const values = Array.isArray(raw) ? raw : [raw];
        if (values.some((item) => typeof item === 'string' && !DECIMAL.test(item))) return [{ path: key, message: 'must be a decimal number' }];
      }
    }
    return validate(value);
  };
}
export function compileBody(schema: TSchema): Validator {
  const strict = (schema as Record<string, unknown>)['x-unknown-fields'] === 'refused';
  const validate = strict ? compile('strictBody', strictBodyAjv, schema) : compile('body', bodyAjv, schema);
  // ajv checks minProperties before it strips unknown fields: check again on what is left.
  const needsField = typeof schema.minProperties === 'number' && schema.minProperties > 0;
  return (value) => {
    const details = validate(value);
    if (details || !needsField || typeof value !== 'object' || value === null || Object.keys(value).length > 0) return details;
    return [{ path: '(root)', message: 'must contain at least one writable field' }];
  };
}
/**
 * Responses strip every field their schema does not list (removeAdditional 'all'). For a union of object shapes that
 * would strip one branch's fields while ajv tries another, so each branch is tried on a copy and the original is then
 * shaped by the first branch that fits. (Unions deeper in a response are of plain values — nullable fields — which
 * stripping cannot touch.)
 */
export function compileResponse(schema: TSchema): Validator {
  const branches = (schema.anyOf ?? schema.oneOf) as TSchema[] | undefined;
  if (!branches?.some((branch) => branch.type === 'object')) return compile('response', responseAjv, schema);
  const validators = branches.map((branch) => compile('response', responseAjv, branch));
  return (value) => {
    let first: ErrorDetail[] | null = null;
    for (const validate of validators) {
      const errors = validate(structuredClone(value));
      if (!errors) return validate(value);
      first ??= errors;
    }
    return first;
  };
}

/**
 * A value that fits no branch of a union (a bad date where a date or null is allowed) gets one message: the
 * branch's own complaint (e.g. the format), not one line per branch plus "must match a schema in anyOf".
 */
function oneErrorPerUnion(errors: ErrorObject[]): ErrorObject[] {
  const unions = errors.filter((error) => error.keyword === 'anyOf');
  if (unions.length === 0) return errors;
  return unions.map((union) => {
    const branches = errors.filter((error) => error !== union && error.instancePath === union.instancePath);
    return branches.find((error) => error.keyword !== 'type') ?? union;
  });
}

const FORMAT_MESSAGES: Record<string, string> = {
  'date-time': 'must be an RFC 3339 date-time, e.g. 2026-01-31T08:00:00Z',
  date: 'must be a date, e.g. 2026-01-31',
  'date-time-or-date': 'must be an RFC 3339 date-time (2026-01-31T08:00:00Z) or a date (2026-01-31)',
};

function toDetails(errors: ErrorObject[]): ErrorDetail[] {
  return oneErrorPerUnion(errors).map((error) => {
    let path = error.instancePath.replace(/\//g, '.').replace(/^\./, '');
    if (error.keyword === 'required') path = path ? `${path}.${error.params.missingProperty}` : String(error.params.missingProperty);
    if (error.keyword === 'additionalProperties') path = path ? `${path}.${error.params.additionalProperty}` : String(error.params.additionalProperty);
    let message = error.message ?? 'is invalid';
    if (error.keyword === 'additionalProperties') message = 'is not a known field (unknown fields are refused here, not dropped)';
    if (error.keyword === 'enum') message = `must be one of: ${(error.params.allowedValues as unknown[]).join(', ')}`;
    if (error.keyword === 'format') message = FORMAT_MESSAGES[String(error.params.format)] ?? message;
    if (error.keyword === 'pattern' && String(error.params.pattern).includes(DISPLAY_FORBIDDEN)) {
      message = `must hold ${DISPLAY_TEXT_RULE}${String(error.params.pattern).startsWith('^(?=') ? ', and no space at either end' : ''}`;
    }
    return { path: path || '(root)', message };
  });
}
