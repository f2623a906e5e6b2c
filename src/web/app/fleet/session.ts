// Fleet sign-in: a fleet user's token (`ems-fleetctl user add` prints it once) is checked with GET /api/fleet/me and kept
// in sessionStorage (this tab only, gone when it closes; docs/fleet.md); every fleet call carries it as a bearer token.
import { signal } from '@preact/signals';
import { saveBlob } from '../components/saveFile';
import type { FleetUser } from './types';

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

export async function resumeFleet(): Promise<void> {
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

export function signOut(): void {
  sessionStorage.removeItem(KEY);
  fleetUser.value = null;
}
