// The one API client: typed from the service's OpenAPI document (schema.d.ts, generated), the bearer token on every
// call, and on a 401 one refresh for any number of calls that got it at once (single flight); the calls are retried
// with the new token, and the app returns to sign-in only when that refresh fails (SPEC Authentication 9).
import { signal } from '@preact/signals';
import createClient from 'openapi-fetch';
import { t, timeOfDay } from '../i18n';
import type { components, paths } from './schema';

export type Schemas = components['schemas'];

/** The refresh token outlives a reload (localStorage); the access token lives in this module only (docs/security.md). */
const REFRESH_KEY = 'ems.refreshToken';

let accessToken: string | null = null;
let inflight: Promise<boolean> | null = null;
const expiredListeners = new Set<() => void>();

export const tokens = {
  set(access: string, refresh: string): void {
    accessToken = access;
    localStorage.setItem(REFRESH_KEY, refresh);
  },
  clear(): void {
    accessToken = null;
    localStorage.removeItem(REFRESH_KEY);
  },
  hasRefresh(): boolean {
    return localStorage.getItem(REFRESH_KEY) !== null;
  },
  refreshToken(): string | null {
    return localStorage.getItem(REFRESH_KEY);
  },
  /** Called when a refresh failed: the session is over and the app shows sign-in. */
  onExpired(listener: () => void): () => void {
    expiredListeners.add(listener);
    return () => expiredListeners.delete(listener);
  },
};

async function refreshOnce(): Promise<boolean> {
  // Another tab of this browser may have rotated the stored token while this one was asking: retry once with it.
  for (let attempt = 0; attempt < 2; attempt += 1) {
    const token = localStorage.getItem(REFRESH_KEY);
    if (!token) return false;
    const answer = await fetch('/api/auth/refresh', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ refreshToken: token }),
    }).catch(() => null);
    if (answer?.ok) {
      const body = (await answer.json()) as { accessToken: string; refreshToken: string };
      tokens.set(body.accessToken, body.refreshToken);
      return true;
    }
    if (answer === null) return false;
    if (localStorage.getItem(REFRESH_KEY) === token) break;
  }
  return false;
}

/** Every caller that sees a 401 awaits the same refresh; the next 401 after it settles starts a new one. */
export function refreshSession(): Promise<boolean> {
  if (!inflight) {
    const run = (navigator.locks ? navigator.locks.request('ems.refresh', refreshOnce) : refreshOnce()) as Promise<boolean>;
    inflight = run.finally(() => {
      inflight = null;
    });
  }
  return inflight;
}

function expire(): void {
  // Signed in on another device (one session per user), signed out there, or the session ran out: the sign-in page
  // says so, and what was typed stays in the tab (components/useDraft.ts) to be offered back.
  if (accessToken !== null || tokens.hasRefresh()) sessionEnded.value = 'ended';
  tokens.clear();
  for (const listener of expiredListeners) listener();
}

const NO_REFRESH = /^\/api\/auth\/(login|refresh|register|forgot-password)/;

/** When the service last answered (epoch ms), and whether its last call went unanswered (the box is unreachable). */
export const lastAnswerAt = signal<number | null>(null);
export const unreachable = signal(false);

/** The code of the stand-in answer for a call the service never answered. */
export const UNREACHABLE = 'UNREACHABLE';

/**
 * fetch, but a call that never got an answer (the service stopped, the network down) becomes a 503 whose error says
 * so in words, with the time of the last answer: every screen shows that through errorText, never "TypeError:
 * Failed to fetch". An aborted call stays an abort.
 */
async function reach(input: Request): Promise<Response> {
  try {
    const answer = await fetch(input);
    lastAnswerAt.value = Date.now();
    unreachable.value = false;
    return answer;
  } catch (error) {
    if (input.signal.aborted) throw error;
    unreachable.value = true;
    const at = lastAnswerAt.value;
    const text = at === null ? t('app.unreachable') : t('app.unreachableSince', { at: timeOfDay(at) });
    return new Response(JSON.stringify({ error: text, code: UNREACHABLE }), { status: 503, headers: { 'Content-Type': 'application/json' } });
  }
}

/** Why the session ended without the person signing out here: null, or 'ended' (signed in elsewhere, or ran out). */
export const sessionEnded = signal<'ended' | null>(null);

/** fetch with the bearer token; a 401 outside sign-in waits for the shared refresh and is retried once. */
export async function authFetch(input: Request): Promise<Response> {
  const retry = input.clone();
  const used = accessToken;
  if (used) input.headers.set('Authorization', `Bearer ${used}`);
  const answer = await reach(input);
  if (answer.status !== 401 || NO_REFRESH.test(new URL(input.url).pathname)) return answer;
  // A refresh that finished while this call was on its way already gave a newer token: no second refresh.
  const fresh = accessToken !== used && accessToken !== null ? true : await refreshSession();
  if (!fresh || !accessToken) {
    expire();
    return answer;
  }
  retry.headers.set('Authorization', `Bearer ${accessToken}`);
  const again = await reach(retry);
  if (again.status === 401) expire();
  return again;
}

export const api = createClient<paths>({ baseUrl: location.origin, fetch: authFetch });

/** The `error` text of a 4xx/5xx body, or the status. */
export function errorText(error: unknown, status?: number): string {
  if (error && typeof error === 'object' && 'error' in error && typeof (error as { error: unknown }).error === 'string') {
    const body = error as { error: string; details?: { path?: string; message: string }[] };
    const details = body.details?.map((d) => `${d.path ? `${d.path.replace(/^body\./, '')} ` : ''}${d.message}`).join('; ');
    return details ? `${body.error}: ${details}` : body.error;
  }
  return status ? `HTTP ${status}` : String(error);
}
