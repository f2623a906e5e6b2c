// A service for the history import's tests: its site in a zone where it is about noon (so "today" has past intervals
// whatever the hour of the run), an admin, and meters made over the API; the CSV of one value per 15-minute interval.
import assert from 'node:assert/strict';
import { dayIntervals } from '../../src/platform/time/calendar.ts';
import { startTestServer, type TestServer, type TestUser } from './server.ts';

const Q = 15 * 60_000;

export type ZonedSite = {
  server: TestServer;
  admin: TestUser;
  /** Creates a meter as the admin (201 asserted) and returns it. */
  meter(body: Record<string, unknown>): Promise<{ id: number }>;
};

/** A fresh service whose site is in `zone`, with an admin. */
export async function zonedSite(zone: string): Promise<ZonedSite> {
  const server = await startTestServer();
  const admin = await server.createUser({ role: 'admin' });
  const zoned = await server.request('PUT', '/api/configs', { token: admin.accessToken, body: { timezone: zone } });
  assert.equal(zoned.status, 200, zoned.text);
  const meter = async (body: Record<string, unknown>) => {
    const response = await server.request('POST', '/api/meters', { token: admin.accessToken, body });
    assert.equal(response.status, 201, response.text);
    return response.body as { id: number };
  };
  return { server, admin, meter };
}

/** The import's usual site: a main meter, an HVAC sub-meter and the virtual rest (main − HVAC). */
export async function importSite(zone: string): Promise<ZonedSite & { main: { id: number }; hvac: { id: number }; rest: { id: number } }> {
  const site = await zonedSite(zone);
  const main = await site.meter({ name: 'Main', code: 'meter.main.kwh', kind: 'energy', site: true });
  const hvac = await site.meter({ name: 'HVAC', code: 'meter.hvac.kwh', kind: 'energy', area: 'HVAC' });
  const rest = await site.meter({
    name: 'Rest',
    kind: 'virtual',
    area: 'Other',
    terms: [
      { meterId: main.id, sign: 1 },
      { meterId: hvac.id, sign: -1 },
    ],
  });
  return { ...site, main, hvac, rest };
}

/** A CSV of one value per 15-minute interval of `days` (in `zone`) for each meter code; '' is an empty cell. */
export function intervalsCsv(zone: string, rows: { code: string; days: string[]; kwh: (i: number) => number | '' }[], header = 'meter,start,kwh'): string {
  const lines = [header];
  for (const { code, days, kwh } of rows) {
    for (const d of days) {
      const { start, count } = dayIntervals(zone, d);
      for (let i = 0; i < count; i += 1) lines.push(`${code},${new Date(start + i * Q).toISOString()},${kwh(i)}`);
    }
  }
  return `${lines.join('\n')}\n`;
}
