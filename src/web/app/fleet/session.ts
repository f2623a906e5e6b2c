// Fleet sign-in: a name and password (a session token for 12 hours), the organisation's single sign-on (the session
// arrives in the URL fragment and is taken out of it at once), an invitation, or the printed token of the first admin
// (`ems-fleetctl user add`). The token is checked with GET /api/fleet/me and kept in sessionStorage (this tab only,
// gone when it closes; docs/fleet.md); every fleet call carries it as a bearer token.
import { signal } from '@preact/signals';
import { saveBlob } from '../components/saveFile';
import type { FleetSession, FleetUser } from './types';

const KEY = 'ems.fleetToken';

export const fleetUser = signal<FleetUser | null>(null);
export const fleetReady = signal(false);

type Answer<T> = { data?: T; error?: unknown; response: Response };

/** GET a fleet route with the token; a 401 ends the session (the token was revoked or is unknown). */
export async function fleetGet<T>(path: string): Promise<Answer<T>> {
  const response = await fetch(path, { headers: { Authorization: `Bearer ${sessionStorage.getItem(KEY) ?? ''}`, Accept: 'application/json' } });
  const body = await response.json().catch(() => undefined);
  if (response.status === 401 && path !== '/api/fleet/me') signOut();
  return response.ok ? { data: body as T, response } : { error: body, response };
}

/** Downloads a fleet file (an XLSX) under the name the service gives. */
export async function fleetDownload(path: string): Promise<string | null> {
  const response = await fetch(path, { headers: { Authorization: `Bearer ${sessionStorage.getItem(KEY) ?? ''}` } });
  if (!response.ok) return `HTTP ${response.status}`;
  const name = /filename="([^"]+)"/.exec(response.headers.get('Content-Disposition') ?? '')?.[1] ?? 'fleet.xlsx';
  saveBlob(await response.blob(), name);
  return null;
}

async function me(): Promise<Answer<FleetUser>> {
  return fleetGet<FleetUser>('/api/fleet/me');
}

/** Why a single sign-on came back without a session (`#sso-error=…`), shown on the sign-in form. */
export const ssoProblem = signal<string | null>(null);

/** A session handed over by the single sign-on (`#session=…`), or its failure: kept or shown, and out of the address bar. */
function takeFragment(): void {
  const hash = new URLSearchParams(location.hash.slice(1));
  const session = hash.get('session');
  const error = hash.get('sso-error');
  if (session === null && error === null) return;
  if (session) sessionStorage.setItem(KEY, session);
  ssoProblem.value = error;
  history.replaceState(history.state, '', location.pathname + location.search);
}

export async function resumeFleet(): Promise<void> {
  takeFragment();
  if (sessionStorage.getItem(KEY)) {
    const { data } = await me();
    if (data) fleetUser.value = data;
    else sessionStorage.removeItem(KEY);
  }
  fleetReady.value = true;
}

/** null when signed in, else the status of the refusal. */
export async function signInFleet(token: string): Promise<number | null> {
  sessionStorage.setItem(KEY, token);
  const { data, response } = await me();
  if (data) {
    fleetUser.value = data;
    return null;
  }
  sessionStorage.removeItem(KEY);
  return response.status;
}

/** A JSON POST (or PATCH) with the token; the answer's body and status. */
export async function fleetSend<T>(method: 'POST' | 'PATCH', path: string, body?: unknown): Promise<Answer<T>> {
  const response = await fetch(path, {
    method,
    headers: { Authorization: `Bearer ${sessionStorage.getItem(KEY) ?? ''}`, Accept: 'application/json', 'Content-Type': 'application/json' },
    body: JSON.stringify(body ?? {}),
  });
  const answer = response.status === 204 ? undefined : await response.json().catch(() => undefined);
  if (response.status === 401 && !path.startsWith('/api/fleet/auth/')) signOut();
  return response.ok ? { data: answer as T, response } : { error: answer, response };
}

/** A session from a password sign-in or an accepted invitation: kept, then checked like a token. */
async function takeSession(answer: Answer<FleetSession>): Promise<number | null> {
  if (!answer.data) return answer.response.status;
  return signInFleet(answer.data.token);
}

export async function signInWithPassword(name: string, password: string): Promise<number | null> {
  return takeSession(await fleetSend<FleetSession>('POST', '/api/fleet/auth/sign-in', { name, password }));
}

export async function acceptInvitation(invitation: string, password: string): Promise<number | null> {
  return takeSession(await fleetSend<FleetSession>('POST', '/api/fleet/auth/accept', { invitation, password }));
}

export function signOut(): void {
  // The session ends at the fleet too (a printed token stays: it is removed with its user).
  const token = sessionStorage.getItem(KEY);
  if (token && fleetUser.value) void fetch('/api/fleet/auth/sign-out', { method: 'POST', headers: { Authorization: `Bearer ${token}` } }).catch(() => {});
  sessionStorage.removeItem(KEY);
  fleetUser.value = null;
}
