// The error catalogue: stable codes with their status, and the typed errors services and storage throw (no HTTP types).
export type ErrorDetail = { path: string; message: string };

/**
 * Every code a response can carry, beside its human message: clients branch on the code, never on the text.
 * The HTTP status lives here too so one table says everything; the router renders it, the OpenAPI document lists it.
 */
export const ERROR_CODES = {
  VALIDATION: { status: 400, description: 'the request breaks its schema or a rule the schema cannot say; details name the fields' },
  UNAUTHENTICATED: { status: 401, description: 'no, a malformed or an invalid access token, or wrong credentials: sign in' },
  TOKEN_EXPIRED: { status: 401, description: 'the access token was valid but its time is up: refresh it (POST /api/auth/refresh), then retry' },
  FORBIDDEN: { status: 403, description: 'the caller’s role or ownership does not allow this' },
  NOT_FOUND: { status: 404, description: 'no such route or record' },
  METHOD_NOT_ALLOWED: { status: 405, description: 'the path exists but not with this method' },
  REQUEST_TIMEOUT: { status: 408, description: 'the request body did not arrive in time' },
  CONFLICT: { status: 409, description: 'the record’s state does not allow this (lifecycle move, last admin, duplicate name)' },
  PAYLOAD_TOO_LARGE: { status: 413, description: 'the body or upload exceeds its limit' },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, description: 'the body or file is not of an accepted type' },
  RANGE_NOT_SATISFIABLE: { status: 416, description: 'the Range header lies outside the file' },
  AUTH_THROTTLED: { status: 429, description: 'too many failed sign-ins; Retry-After says when to try again' },
  RATE_LIMITED: { status: 429, description: 'too many requests of this kind; Retry-After says when to try again' },
  INTERNAL: { status: 500, description: 'an unexpected failure; the body carries no detail, the log does' },
  BAD_GATEWAY: { status: 502, description: 'the upstream gateway answered with an error' },
  UNAVAILABLE: { status: 503, description: 'busy or temporarily unable to serve; try again' },
  GATEWAY_TIMEOUT: { status: 504, description: 'the upstream gateway did not answer in time' },
  STORAGE_FULL: { status: 507, description: 'the appliance’s disk is full' },
} as const satisfies Record<string, { status: number; description: string }>;

export type ErrorCode = keyof typeof ERROR_CODES;

/** The code of a status when a caller names only the status (framework errors, the generic HttpError). */
export function codeForStatus(status: number): ErrorCode {
  const match = (Object.keys(ERROR_CODES) as ErrorCode[]).find((code) => ERROR_CODES[code].status === status);
  return match ?? (status >= 500 ? 'INTERNAL' : 'VALIDATION');
}

export class AppError extends Error {
  readonly status: number;

  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: ErrorDetail[],
    readonly headers?: Record<string, string>,
  ) {
    super(message);
    this.status = ERROR_CODES[code].status;
  }
}

/** An error named by its status alone; the code follows from the status. */
export class HttpError extends AppError {
  override readonly status: number;

  constructor(status: number, message: string, details?: ErrorDetail[], headers?: Record<string, string>) {
    super(codeForStatus(status), message, details, headers);
    this.status = status;
  }
}

export class BadRequest extends AppError {
  constructor(message = 'Bad request', details?: ErrorDetail[]) {
    super('VALIDATION', message, details);
  }
}
export class TokenExpired extends AppError {
  constructor() {
    super('TOKEN_EXPIRED', 'The access token has expired: refresh it', undefined, {
      'WWW-Authenticate': 'Bearer error="invalid_token", error_description="expired"',
    });
  }
}
export class Unauthorized extends AppError {
  constructor(message = 'Authentication required') {
    super('UNAUTHENTICATED', message);
  }
}
export class Forbidden extends AppError {
  constructor(message = 'Your role does not allow this') {
    super('FORBIDDEN', message);
  }
}
export class NotFound extends AppError {
  constructor(message = 'Not found') {
    super('NOT_FOUND', message);
  }
}
export class Conflict extends AppError {
  constructor(message: string, details?: ErrorDetail[]) {
    super('CONFLICT', message, details);
  }
}
/** headers: e.g. `Connection: close` when the body is refused before it is read. */
export class PayloadTooLarge extends AppError {
  constructor(message = 'Payload too large', headers?: Record<string, string>) {
    super('PAYLOAD_TOO_LARGE', message, undefined, headers);
  }
}
/** 429 with Retry-After; `AUTH_THROTTLED` for the sign-in lockout, `RATE_LIMITED` for any other limit. */
export class TooManyRequests extends AppError {
  constructor(message: string, retryAfterSec: number, code: 'AUTH_THROTTLED' | 'RATE_LIMITED' = 'RATE_LIMITED') {
    super(code, message, undefined, { 'Retry-After': String(Math.max(1, Math.ceil(retryAfterSec))) });
  }
}
/** 405 with Allow; the message says which methods the path takes unless the caller says why. */
export class MethodNotAllowed extends AppError {
  constructor(method: string, path: string, allowed: string[], message = `${method} is not allowed on ${path}; use ${allowed.join(', ')}`) {
    super('METHOD_NOT_ALLOWED', message, undefined, { Allow: allowed.join(', ') });
  }
}
export class UnsupportedMediaType extends AppError {
  constructor(message: string) {
    super('UNSUPPORTED_MEDIA_TYPE', message);
  }
}
/** 416 with a Content-Range naming the file's size (RFC 9110 15.5.17): the Range header lies outside the file. */
export class RangeNotSatisfiable extends AppError {
  constructor(size: number) {
    super('RANGE_NOT_SATISFIABLE', 'Range not satisfiable', undefined, { 'Content-Range': `bytes */${size}` });
  }
}
export class BadGateway extends AppError {
  constructor(message: string) {
    super('BAD_GATEWAY', message);
  }
}
export class GatewayTimeout extends AppError {
  constructor(message: string) {
    super('GATEWAY_TIMEOUT', message);
  }
}
export class ServiceUnavailable extends AppError {
  constructor(message: string) {
    super('UNAVAILABLE', message);
  }
}
/**
 * A handler's answer that fails its own response schema: a server fault (500 INTERNAL, no detail in the body; the
 * caller logs the route and the failing fields at error). Never a client 400: by then the request was valid and a
 * write may be committed.
 */
export class ResponseSchemaError extends AppError {
  constructor() {
    super('INTERNAL', 'Internal Server Error');
  }
}
