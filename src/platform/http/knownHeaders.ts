// Response headers whose names and values are the service's own constants (or a UUID), stored without Node's check of
// every character on every request.
import { OutgoingMessage, type ServerResponse } from 'node:http';

/**
 * Where Node keeps a response's headers until it writes them: `lowercased name → [name, value]`, exactly what
 * `setHeader` stores after validating the name (a token) and the value (no control characters). For a name and value
 * that are constants of this code, that check — two regular expressions and a lowercasing, ~150 ns a header — says
 * the same every time: six of them on a signed-in request were ~2 % of its CPU (issue 44, round 10). Not found on some
 * other Node: `setHeader` then, as before. test/platform/frontDoor.test.ts checks the headers on the wire.
 */
const OUT_HEADERS = Object.getOwnPropertySymbols(new OutgoingMessage()).find((symbol) => symbol.description === 'kOutHeaders');

/** A header the service always sets the same way: its name in the case sent and lowercased, and its value. */
export type KnownHeader = readonly [name: string, lower: string, value: string];

export function knownHeader(name: string, value: string): KnownHeader {
  // The checks setHeader would make, once.
  const probe = new OutgoingMessage();
  probe.setHeader(name, value);
  return [name, name.toLowerCase(), value];
}

/** setHeader for a known header; `value` for one whose value its caller made and knows valid (a UUID). */
export function setKnownHeader(res: ServerResponse, header: KnownHeader, value = header[2]): void {
  if (OUT_HEADERS === undefined || res.headersSent) {
    res.setHeader(header[0], value);
    return;
  }
  const slots = res as unknown as Record<symbol, Record<string, [string, string]> | null>;
  let headers = slots[OUT_HEADERS];
  if (headers === null || headers === undefined) {
    headers = Object.create(null) as Record<string, [string, string]>;
    slots[OUT_HEADERS] = headers;
  }
  headers[header[1]] = [header[0], value];
}
