// Schema pieces every feature reuses: ids, timestamps, pagination, the error body.
import { Type, type TSchema } from '@sinclair/typebox';
import { ERROR_CODES, type ErrorCode } from '../errors.ts';

export const IdParams = Type.Object({ id: Type.Integer({ minimum: 1 }) });
export const Timestamp = Type.String({ format: 'date-time', description: 'ISO 8601, UTC' });
export const NullableTimestamp = Type.Union([Timestamp, Type.Null()]);
export const Email = Type.String({ format: 'email', maxLength: 254 });

export const ErrorBody = Type.Object({
  error: Type.String(),
  code: stringEnum(Object.keys(ERROR_CODES) as ErrorCode[]),
  details: Type.Optional(Type.Array(Type.Object({ path: Type.String(), message: Type.String() }))),
});

/**
 * The highest page a list answers: past it the offset (page × pageSize) leaves the integers SQLite and JSON carry
 * exactly, and a 401-digit page was read as a float and answered `"page": null`. 1,000,000 pages of 200 is far past
 * any table the appliance holds.
 */
export const MAX_PAGE = 1_000_000;

export const PageQuery = {
  page: Type.Integer({ minimum: 1, maximum: MAX_PAGE, default: 1 }),
  pageSize: Type.Integer({ minimum: 1, maximum: 200, default: 20 }),
};

export function Page<T extends TSchema>(item: T) {
  return Type.Object({
    items: Type.Array(item),
    total: Type.Integer({ minimum: 0 }),
    page: Type.Integer({ minimum: 1 }),
    pageSize: Type.Integer({ minimum: 1 }),
  });
}

/** A list answer's example: one item on the first page (for a route's responseExample). */
export function pageExample<T>(item: T, total = 1): { items: T[]; total: number; page: number; pageSize: number } {
  return { items: [item], total, page: 1, pageSize: 20 };
}

/**
 * Characters a name shown to people may not hold: C0/C1 controls (newlines, escape sequences), the line and paragraph
 * separators, and the bidirectional marks, embeddings, overrides and isolates (U+202E turns "exe.txt" into "txt.exe"
 * on a wallboard; Trojan Source, CVE-2021-42574). ajv compiles patterns with the `u` flag, so \p{Cc} is understood.
 */
export const DISPLAY_FORBIDDEN = '\\p{Cc}\\u2028\\u2029\\u061C\\u200E\\u200F\\u202A-\\u202E\\u2066-\\u2069';
/** A pattern for display text: none of DISPLAY_FORBIDDEN; `trimmed` also refuses leading or trailing white space. */
export function displayTextPattern(trimmed = false): string {
  return trimmed ? `^(?=[^${DISPLAY_FORBIDDEN}]*$)\\S(.*\\S)?$` : `^[^${DISPLAY_FORBIDDEN}]*$`;
}
export const DISPLAY_TEXT_RULE = 'no control, line-separator or bidirectional-override characters';

export const Ok = Type.Object({ ok: Type.Literal(true) });

/** A string enum as plain JSON Schema `enum`: ajv then reports "must be one of: a, b, c" instead of one error per literal. */
export function stringEnum<const T extends readonly string[]>(values: T, options: { description?: string } = {}) {
  return Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...options });
}

/** A repeatable enum query filter (`?status=a&status=b`). */
export function stringEnumList<const T extends readonly string[]>(values: T) {
  return Type.Array(stringEnum(values), { uniqueItems: true, maxItems: values.length, description: 'one or more; repeat the parameter' });
}

/** `from`/`to` accept a full RFC 3339 date-time or a plain date (UTC midnight; a date-only `to` includes that whole day). */
export function timeBound(description: string) {
  return Type.String({ format: 'date-time-or-date', description });
}

/**
 * Schema option: a body whose unknown fields are refused (400 naming the field) where every other body drops them
 * (validation.ts); an OpenAPI extension, so the reference says it too.
 */
export const REFUSE_UNKNOWN_FIELDS = { additionalProperties: false, 'x-unknown-fields': 'refused' } as const;
