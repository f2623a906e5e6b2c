// The one reading of an `Authorization: Bearer <token>` header, for the API and /metrics alike.

/**
 * The credentials of a Bearer Authorization header, or undefined when the header is absent or of another scheme.
 * RFC 7235 §2.1: the scheme name is case-insensitive (`bearer`, `BEARER`), one or more spaces before the credentials
 * (spaces around the whole value are not part of the field value, RFC 9110 §5.5).
 */
export function bearerCredentials(header: string | undefined): string | undefined {
  return /^\s*bearer +(\S+)\s*$/i.exec(header ?? '')?.[1];
}
