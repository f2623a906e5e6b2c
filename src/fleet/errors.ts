// The fleet's refusals: a stable code, its status and a message a site operator can act on. Rendered in one place (app.ts).
export const FLEET_ERRORS = {
  invalid_batch: 400,
  invalid_request: 400,
  unauthenticated: 401,
  forbidden: 403,
  not_found: 404,
  sequence_backwards: 409,
  sequence_gap: 409,
  second_box: 409,
  nothing_to_decide: 409,
  alert_not_active: 409,
  enrolment_code_invalid: 400,
  invitation_invalid: 400,
  last_admin: 409,
  sso_off: 404,
  throttled: 429,
  sso_unreachable: 502,
  batch_too_large: 413,
  unknown_meter: 422,
  out_of_range: 422,
  busy: 429,
} as const;

export type FleetErrorCode = keyof typeof FLEET_ERRORS;

export class FleetError extends Error {
  readonly status: number;

  constructor(
    readonly code: FleetErrorCode,
    message: string,
    readonly extra: { retryAfterSec?: number; details?: unknown } = {},
  ) {
    super(message);
    this.status = FLEET_ERRORS[code];
  }
}
