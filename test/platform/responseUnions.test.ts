// A response that is a union of object shapes keeps the fields of the branch it matches (and loses only unlisted ones).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Type } from '@sinclair/typebox';
import { compileResponse } from '../../src/platform/http/validation.ts';

const Linked = Type.Object({ status: Type.Literal('linked'), accessToken: Type.String() });
const BindRequired = Type.Object({ status: Type.Literal('bind_required'), bindToken: Type.String(), profile: Type.Object({ email: Type.String() }) });
const Outcome = Type.Union([Linked, BindRequired]);

test('the second branch keeps its own fields; fields no branch lists are stripped', () => {
  const validate = compileResponse(Outcome);
  const value = { status: 'bind_required', bindToken: 't', profile: { email: 'a@b.test', secret: 'x' }, passwordHash: 'h' };
  assert.equal(validate(value), null);
  assert.deepEqual(value, { status: 'bind_required', bindToken: 't', profile: { email: 'a@b.test' } });
});

test('the first branch too, and a value that fits no branch is an error', () => {
  const validate = compileResponse(Outcome);
  const linked = { status: 'linked', accessToken: 'a', extra: 1 };
  assert.equal(validate(linked), null);
  assert.deepEqual(linked, { status: 'linked', accessToken: 'a' });
  const neither = { status: 'other' };
  assert.ok(validate(neither));
  assert.deepEqual(neither, { status: 'other' }, 'a failed check leaves the value as it was');
});

test('nullable plain fields (unions of values) are untouched', () => {
  const validate = compileResponse(Type.Object({ at: Type.Union([Type.String(), Type.Null()]) }));
  const value = { at: null, leak: 'x' };
  assert.equal(validate(value), null);
  assert.deepEqual(value, { at: null });
});
