// Stored energy written as the collector writes it, for tests with known answers: every 15-minute interval of each
// day of a meter at one value (measured), in one transaction.
import type { TestServer } from './server.ts';

export function fillDays(server: TestServer, meterId: number, days: string[], value: number): void {
  const { store } = server.service.deps.energy;
  const records = days.map((day) => {
    const record = store.load(meterId, day);
    record.kwh.fill(value);
    return record;
  });
  store.transaction(() => store.save(records));
}
