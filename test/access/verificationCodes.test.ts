// The in-memory code store: lifetime, single use, purpose, wrong-try limit, resend interval, bounded size.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { MAX_ENTRIES, MAX_WRONG_TRIES, RESEND_INTERVAL_MS, VerificationCodes } from '../../src/access/auth/verificationCodes.ts';
import { AppError } from '../../src/platform/errors.ts';

function store(ttlMs = 300_000) {
  const clock = { now: 1_000_000 };
  return { codes: new VerificationCodes(ttlMs, () => clock.now), clock };
}

const status = (fn: () => void) => {
  try {
    fn();
  } catch (error) {
    if (error instanceof AppError) return error.status;
    throw error;
  }
  return 200;
};

describe('verification codes', () => {
  test('6 digits, valid until the lifetime passes', () => {
    const { codes, clock } = store(300_000);
    const code = codes.issue('a@example.test', 'register');
    assert.match(code, /^\d{6}$/);
    clock.now += 299_999;
    assert.equal(
      status(() => codes.check('A@EXAMPLE.TEST', 'register', code)),
      200,
    );
    clock.now += 1;
    assert.equal(
      status(() => codes.check('a@example.test', 'register', code)),
      400,
    );
  });

  test('single use and bound to its purpose', () => {
    const { codes } = store();
    const code = codes.issue('a@example.test', 'reset');
    assert.equal(
      status(() => codes.consume('a@example.test', 'register', code)),
      400,
    );
    assert.equal(
      status(() => codes.consume('a@example.test', 'reset', code)),
      200,
    );
    assert.equal(
      status(() => codes.consume('a@example.test', 'reset', code)),
      400,
    );
  });

  test(`${MAX_WRONG_TRIES} wrong tries void the code`, () => {
    const { codes } = store();
    const code = codes.issue('a@example.test', 'register');
    const wrong = code === '999999' ? '000000' : '999999';
    for (let i = 0; i < MAX_WRONG_TRIES; i += 1)
      assert.equal(
        status(() => codes.check('a@example.test', 'register', wrong)),
        400,
      );
    assert.equal(
      status(() => codes.check('a@example.test', 'register', code)),
      400,
    );
  });

  test('one send per email and purpose per minute; a new send replaces the old code', () => {
    const { codes, clock } = store();
    const first = codes.issue('a@example.test', 'register');
    assert.equal(
      status(() => codes.issue('a@example.test', 'register')),
      429,
    );
    assert.equal(
      status(() => codes.issue('a@example.test', 'reset')),
      200,
      'the other purpose is separate',
    );
    clock.now += RESEND_INTERVAL_MS;
    const second = codes.issue('a@example.test', 'register');
    if (first !== second)
      assert.equal(
        status(() => codes.check('a@example.test', 'register', first)),
        400,
      );
    assert.equal(
      status(() => codes.check('a@example.test', 'register', second)),
      200,
    );
  });

  test('bounded: past the cap new emails are refused with 503, and expired entries are swept', () => {
    const { codes, clock } = store(60_000);
    for (let i = 0; i < MAX_ENTRIES; i += 1) codes.issue(`u${i}@example.test`, 'register');
    assert.equal(codes.size, MAX_ENTRIES);
    assert.equal(
      status(() => codes.issue('one-more@example.test', 'register')),
      503,
    );
    clock.now += 60_000;
    codes.sweep();
    assert.equal(codes.size, 0);
    assert.equal(
      status(() => codes.issue('one-more@example.test', 'register')),
      200,
    );
  });
});
