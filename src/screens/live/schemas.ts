// The live stream's query and the shapes its events carry (documented in the API reference through the route).
import { Type } from '@sinclair/typebox';

export const LiveQuery = Type.Object({
  lastEventId: Type.Optional(
    Type.String({
      maxLength: 64,
      pattern: '^[0-9a-z]+-[0-9]+$',
      description: 'the id of the last event received, for a client that cannot send the Last-Event-ID header (the header wins when both are sent)',
    }),
  ),
});

export const LIVE_DESCRIPTION = [
  'A server-sent event stream (text/event-stream), one per open tab. Events:',
  '`power` {powerKw, todayKwh, day}: the site now, sent when it changes;',
  '`interval` {collectedAt, state}: the collector stored new intervals (a meter chart fetches its series again);',
  '`alerts` {active, critical, cleared, shelved, acknowledged, resolved}: the counts of GET /api/alerts/counts, sent when one changes;',
  '`alert` {id, level, title, area, occurredAt}: an alert was raised;',
  "`jobs` [{name, owner, running, failures, lastStartedAt}]: the box's jobs, sent when one starts, ends or fails;",
  '`hello` {reset, heartbeatMs}: ends the opening; reset true means the events before it are the current state of every kind,',
  'false that they are exactly the events missed since Last-Event-ID.',
  'Every event has an id (`<boot>-<n>`); send the last one back as the Last-Event-ID header (or ?lastEventId=) to resume.',
  'A comment line (`: heartbeat`) is sent after EMS_EVENTS_HEARTBEAT (15 s) without an event: a client that hears nothing',
  'for twice that long should call the stream stale. The stream ends when the access token expires (reconnect with a fresh one).',
  'At most EMS_EVENTS_PER_USER (8) streams per user and 200 in all: one more is 429 with Retry-After.',
].join(' ');

export const PUBLIC_LIVE_DESCRIPTION = [
  'The public side of GET /api/events for the lobby wallboard: `changed` {kind} (power, interval or alerts) when that',
  'part changed, never what (the page then asks GET /api/wallboard, which says what it may show), `hello` at the opening,',
  'heartbeats and Last-Event-ID as there. At most 4 streams per address; one more is 429.',
].join(' ');
