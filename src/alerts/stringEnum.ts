// A string enum as plain JSON Schema `enum`: ajv then reports "must be one of: a, b, c" instead of one error per literal.
import { Type } from '@sinclair/typebox';

export function stringEnum<const T extends readonly string[]>(values: T, options: { description?: string } = {}) {
  return Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...options });
}
