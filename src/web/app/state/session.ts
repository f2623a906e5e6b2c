// Who is signed in. Signing in stores the token pair (api/client.ts); a page load with a stored refresh token resumes
// the session with one refresh and GET /api/auth/me.
import { computed, signal } from '@preact/signals';
import { api, errorText, refreshSession, sessionEnded, tokens } from '../api/client';
import type { User } from '../api/types';
import { clearDrafts } from '../components/useDraft';

/** The person's own staff-app language and theme are null for the browser's (state/preferences.ts applies them). */
export type { User };

export const user = signal<User | null>(null);
/** false until the stored session was tried on load. */
export const ready = signal(false);

const RANK = { viewer: 0, operator: 1, admin: 2 } as const;
export const role = computed(() => user.value?.role ?? null);
export function can(needed: keyof typeof RANK): boolean {
  return user.value !== null && RANK[user.value.role] >= RANK[needed];
}

tokens.onExpired(() => {
  user.value = null;
});

export async function resume(): Promise<void> {
  if (tokens.hasRefresh() && (await refreshSession())) {
    const { data } = await api.GET('/api/auth/me');
    if (data) user.value = data;
  }
  ready.value = true;
}

export async function signIn(username: string, password: string): Promise<string | null> {
  const { data, error, response } = await api.POST('/api/auth/login', { body: { username, password } });
  if (!data) return errorText(error, response.status);
  tokens.set(data.accessToken, data.refreshToken);
  sessionEnded.value = null;
  user.value = data.user;
  return null;
}

/** Tokens from the OAuth popup (postMessage from the service's callback page). */
export async function adoptTokens(accessToken: string, refreshToken: string): Promise<void> {
  tokens.set(accessToken, refreshToken);
  const { data } = await api.GET('/api/auth/me');
  if (data) user.value = data;
}

export async function signOut(): Promise<void> {
  await api.POST('/api/auth/logout').catch(() => undefined);
  clearDrafts();
  tokens.clear();
  user.value = null;
}
