// The typed errors as the HTTP layer sees them; they are declared with their codes in src/errors.ts.
export * from '../errors.ts';
