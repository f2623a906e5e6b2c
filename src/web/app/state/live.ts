// The tab's one live stream (GET /api/events, server-sent events read through fetch so the bearer token and its
// refresh apply): opened while someone is signed in, resumed with Last-Event-ID after a drop, called stale when
// nothing (not even a heartbeat) came for twice the heartbeat, or while it is down. Screens read the signals below or
// listen for a kind, and fetch again on news instead of on a timer. A new critical alert is announced through the
// Notification API once the person asked for it (never assumed).
import { signal } from '@preact/signals';
import { useEffect, useRef } from 'preact/hooks';
import { authFetch } from '../api/client';
import type { paths } from '../api/schema';

export type LiveKind = 'power' | 'interval' | 'alerts' | 'alert' | 'jobs';
export type AlertCounts = paths['/api/alerts/counts']['get']['responses'][200]['content']['application/json'];
export type RaisedAlert = { id: number; level: 'critical' | 'warning' | 'info'; title: string; area: string | null; occurredAt: string };

/** 'off' signed out; 'connecting' before the first hello; 'live'; 'stale' (down or silent too long, retrying). */
export const liveState = signal<'off' | 'connecting' | 'live' | 'stale'>('off');
/** When the last event or heartbeat arrived (epoch ms), null before any. */
export const lastHeard = signal<number | null>(null);
export const livePower = signal<{ powerKw: number; todayKwh: number; day: string } | null>(null);
export const liveAlerts = signal<AlertCounts | null>(null);
export const liveInterval = signal<{ collectedAt: string | null; state: string } | null>(null);

const listeners = new Map<LiveKind, Set<(data: unknown) => void>>();
let lastEventId: string | null = null;
let heartbeatMs = 15_000;
let controller: AbortController | null = null;
let retryTimer: ReturnType<typeof setTimeout> | undefined;
let watchTimer: ReturnType<typeof setInterval> | undefined;
let failures = 0;

/** Calls `listener` with each event of `kind` while the component is mounted. */
export function useLive(kind: LiveKind, listener: (data: unknown) => void): void {
  const latest = useRef(listener);
  latest.current = listener;
  useEffect(() => {
    const call = (data: unknown) => latest.current(data);
    let set = listeners.get(kind);
    if (!set) listeners.set(kind, (set = new Set()));
    set.add(call);
    return () => set.delete(call);
  }, [kind]);
}

const NOTIFY_KEY = 'ems.notifyCritical';

/** Whether new critical alerts are announced: the person asked, and the browser allows it. */
export const notifyCritical = signal(typeof Notification !== 'undefined' && Notification.permission === 'granted' && localStorage.getItem(NOTIFY_KEY) === '1');

/** Asked from a button: the browser's permission prompt, then the choice kept for this browser. */
export async function askToNotify(on: boolean): Promise<void> {
  if (!on) {
    localStorage.removeItem(NOTIFY_KEY);
    notifyCritical.value = false;
    return;
  }
  if (typeof Notification === 'undefined') return;
  const answer = Notification.permission === 'granted' ? 'granted' : await Notification.requestPermission();
  if (answer === 'granted') localStorage.setItem(NOTIFY_KEY, '1');
  notifyCritical.value = answer === 'granted';
}

function announce(alert: RaisedAlert): void {
  if (alert.level !== 'critical' || !notifyCritical.value || Notification.permission !== 'granted') return;
  new Notification(alert.title, { body: alert.area ?? '', tag: `ems-alert-${alert.id}` });
}

function dispatch(kind: string, text: string): void {
  const data = JSON.parse(text) as unknown;
  if (kind === 'hello') {
    heartbeatMs = (data as { heartbeatMs: number }).heartbeatMs;
    liveState.value = 'live';
    failures = 0;
    return;
  }
  if (kind === 'power') livePower.value = data as typeof livePower.value;
  else if (kind === 'alerts') liveAlerts.value = data as AlertCounts;
  else if (kind === 'interval') liveInterval.value = data as typeof liveInterval.value;
  else if (kind === 'alert') announce(data as RaisedAlert);
  for (const listener of listeners.get(kind as LiveKind) ?? []) listener(data);
}

async function connect(): Promise<void> {
  const mine = new AbortController();
  controller = mine;
  const headers: Record<string, string> = { Accept: 'text/event-stream' };
  if (lastEventId) headers['Last-Event-ID'] = lastEventId;
  let retryAfterMs = Math.min(30_000, 1000 * 2 ** failures);
  try {
    const answer = await authFetch(new Request(`${location.origin}/api/events`, { headers, signal: mine.signal }));
    if (answer.status === 429) retryAfterMs = Number(answer.headers.get('Retry-After') ?? 5) * 1000;
    if (answer.ok && answer.body) {
      const reader = answer.body.pipeThrough(new TextDecoderStream()).getReader();
      let buffer = '';
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        lastHeard.value = Date.now();
        buffer += value;
        let cut = buffer.indexOf('\n\n');
        while (cut !== -1) {
          const block = buffer.slice(0, cut);
          buffer = buffer.slice(cut + 2);
          let kind = 'message';
          let data = '';
          for (const line of block.split('\n')) {
            if (line.startsWith('id: ')) lastEventId = line.slice(4);
            else if (line.startsWith('event: ')) kind = line.slice(7);
            else if (line.startsWith('data: ')) data += line.slice(6);
          }
          if (data) dispatch(kind, data);
          cut = buffer.indexOf('\n\n');
        }
      }
      // The stream ended on the service's side (the token's expiry, a restart): come back at once.
      retryAfterMs = 0;
    }
  } catch {
    // unreachable or aborted: below
  }
  if (mine.signal.aborted || liveState.value === 'off') return;
  failures += 1;
  if (retryAfterMs > 0) liveState.value = 'stale';
  retryTimer = setTimeout(() => void connect(), retryAfterMs);
}

/** Opens the stream (signed in); a second call while open does nothing. */
export function startLive(): void {
  if (liveState.value !== 'off') return;
  liveState.value = 'connecting';
  failures = 0;
  void connect();
  // Silence longer than two heartbeats is a stream that no longer carries news, even if the socket looks open.
  watchTimer = setInterval(() => {
    if (liveState.value === 'live' && lastHeard.value !== null && Date.now() - lastHeard.value > 2 * heartbeatMs) {
      liveState.value = 'stale';
      // Aborted here, that attempt ends without a retry of its own: the next one starts now.
      controller?.abort();
      clearTimeout(retryTimer);
      void connect();
    }
  }, 1000);
}

export function stopLive(): void {
  liveState.value = 'off';
  controller?.abort();
  controller = null;
  clearTimeout(retryTimer);
  clearInterval(watchTimer);
  lastEventId = null;
  livePower.value = null;
  liveAlerts.value = null;
  liveInterval.value = null;
}
