// What a sign-in provider does for the service, and the profile clean-up both providers share.
import type { ProviderName, ProviderProfile } from './schemas.ts';
import type * as OpenId from 'openid-client';

/** openid-client (with oauth4webapi and jose) is loaded with the first sign-in through a provider, not at start-up. */
let openid: typeof OpenId | undefined;

export async function openidClient(): Promise<typeof OpenId> {
  return (openid ??= await import('openid-client'));
}

/** openid-client if a sign-in has loaded it (its error classes can only be met after that). */
export function openidIfLoaded(): typeof OpenId | undefined {
  return openid;
}

export type AuthorizationRequest = { state: string; codeVerifier: string; nonce: string; redirectUri: string };

/** Everything the callback needs to finish: the provider's parameters plus what was kept server-side at authorize. */
export type CodeExchange = AuthorizationRequest & { code: string; iss?: string };

export interface OAuthProvider {
  readonly name: ProviderName;
  readonly displayName: string;
  authorizationUrl(request: AuthorizationRequest): Promise<string>;
  /** Exchanges the code and reads the profile; throws BadGateway when the provider fails or answers something unverifiable. */
  exchange(exchange: CodeExchange): Promise<ProviderProfile>;
}

/** Every provider call gives up after this long: a hung provider must not hold a request open. */
export const PROVIDER_TIMEOUT_MS = 10_000;

const USERNAME_MIN = 3;
const USERNAME_MAX = 32;

/** A username suggestion that already fits the account rules (3-32 of [a-zA-Z0-9_.-]), or nothing. */
export function suggestUsername(raw: unknown): string | undefined {
  if (typeof raw !== 'string') return undefined;
  const local = raw.includes('@') ? raw.slice(0, raw.indexOf('@')) : raw;
  const cleaned = local
    .replace(/[^a-zA-Z0-9_.-]+/g, '_')
    .replace(/^_+|_+$/g, '')
    .slice(0, USERNAME_MAX);
  return cleaned.length >= USERNAME_MIN ? cleaned : undefined;
}

export function cleanEmail(raw: unknown): string | undefined {
  if (typeof raw !== 'string' || raw.length > 254) return undefined;
  return /^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(raw) ? raw : undefined;
}

export function cleanName(raw: unknown): string | undefined {
  if (typeof raw !== 'string') return undefined;
  const trimmed = raw.trim().slice(0, 200);
  return trimmed || undefined;
}

export function buildProfile(provider: ProviderName, providerUserId: string, fields: { username?: unknown; email?: unknown; name?: unknown }): ProviderProfile {
  const profile: ProviderProfile = { provider, providerUserId };
  const username = suggestUsername(fields.username);
  const email = cleanEmail(fields.email);
  const name = cleanName(fields.name);
  if (username) profile.username = username;
  if (email) profile.email = email;
  if (name) profile.name = name;
  return profile;
}
