// The error catalogue: services and storage throw these, one middleware renders them as { error, details? }.
export type ErrorDetail = { path: string; message: string };

export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly details?: ErrorDetail[],
    readonly headers?: Record<string, string>,
  ) {
    super(message);
  }
}

export class BadRequest extends HttpError {
  constructor(message = 'Bad request', details?: ErrorDetail[]) {
    super(400, message, details);
  }
}
export class Unauthorized extends HttpError {
  constructor(message = 'Authentication required') {
    super(401, message);
  }
}
export class Forbidden extends HttpError {
  constructor(message = 'Your role does not allow this') {
    super(403, message);
  }
}
export class NotFound extends HttpError {
  constructor(message = 'Not found') {
    super(404, message);
  }
}
export class Conflict extends HttpError {
  constructor(message: string) {
    super(409, message);
  }
}
export class PayloadTooLarge extends HttpError {
  constructor(message = 'Payload too large') {
    super(413, message);
  }
}
export class TooManyRequests extends HttpError {
  constructor(message: string, retryAfterSec: number) {
    super(429, message, undefined, { 'Retry-After': String(Math.max(1, Math.ceil(retryAfterSec))) });
  }
}
export class BadGateway extends HttpError {
  constructor(message: string) {
    super(502, message);
  }
}
export class GatewayTimeout extends HttpError {
  constructor(message: string) {
    super(504, message);
  }
}
export class ServiceUnavailable extends HttpError {
  constructor(message: string) {
    super(503, message);
  }
}
