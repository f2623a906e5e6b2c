// GET /api/exports/energy: many meters in one call, wide or long, site-time timestamps with offsets, CSV in the
// reader's separators with an optional BOM, XLSX opened by LibreOffice with German and English settings, values equal
// to the series API, and clear 4xx answers for bad requests.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { dayIntervals } from '../../src/platform/time/calendar.ts';
import { startTestServer, tempDir, type TestServer, type TestUser } from '../helpers/server.ts';
import { seedYear, type SeededYear } from '../helpers/seededYear.ts';

const run = promisify(execFile);
const TIMEZONE = 'Europe/Berlin';
// The autumn DST change in Berlin: 25 hours, 100 quarter hours.
const FROM = '2026-10-24';
const TO = '2026-10-27';

describe('energy exports', () => {
  let server: TestServer;
  let viewer: TestUser;
  let seeded: SeededYear;

  before(async () => {
    server = await startTestServer();
    const admin = await server.createUser({ role: 'admin' });
    viewer = await server.createUser({ role: 'viewer' });
    const config = await server.request('PUT', '/api/configs', { token: admin.accessToken, body: { timezone: TIMEZONE, locale: 'de-DE' } });
    assert.equal(config.status, 200, config.text);
    seeded = seedYear(server, TIMEZONE, { days: 2 });
  });
  after(() => server.close());

  const download = async (query: string): Promise<{ status: number; type: string; body: Buffer }> => {
    const response = await fetch(`${server.url}/api/exports/energy?${query}`, { headers: { authorization: `Bearer ${viewer.accessToken}` } });
    return { status: response.status, type: response.headers.get('content-type') ?? '', body: Buffer.from(await response.arrayBuffer()) };
  };
  const series = async (meterId: number, resolution: string): Promise<{ start: string; kwh: number | null }[]> =>
    (await server.request('GET', `/api/energy/series?meterId=${meterId}&from=${FROM}&to=${TO}&resolution=${resolution}`, { token: viewer.accessToken })).body
      .points;

  test('wide CSV of a meter list: one column per meter, site time with offsets, values equal to the series API', async () => {
    const ids = seeded.meterIds.slice(0, 3);
    const csv = await download(`from=${FROM}&to=${TO}&meterIds=${ids.join(',')}&locale=en-GB`);
    assert.equal(csv.status, 200);
    assert.match(csv.type, /text\/csv/);
    const lines = csv.body.toString('utf8').trimEnd().split('\r\n');
    assert.equal(lines[0], `start,end,${ids.map((id, i) => `Sub-meter ${i + 1} (${id}) electricity kWh`).join(',')}`);
    assert.equal(lines.length, 1 + 96 + 100 + 96, 'a 100-interval DST day between two 96-interval days');
    assert.equal(lines[1].split(',')[0], '2026-10-24T00:00:00+02:00');
    // The repeated hour of the DST change: 02:00 twice, first at +02:00, then at +01:00.
    const starts = lines.slice(1).map((line) => line.split(',')[0]);
    assert.ok(starts.includes('2026-10-25T02:00:00+02:00') && starts.includes('2026-10-25T02:00:00+01:00'));
    assert.equal(starts.at(-1), '2026-10-26T23:45:00+01:00');
    for (const [column, id] of ids.entries()) {
      const points = await series(id, '15min');
      assert.equal(points.length, lines.length - 1);
      points.forEach((point, row) => {
        assert.equal(Date.parse(lines[row + 1].split(',')[0]), Date.parse(point.start), `row ${row} start`);
        assert.equal(Number(lines[row + 1].split(',')[2 + column]), point.kwh, `meter ${id} row ${row}`);
      });
    }
  });

  test('long CSV of an area in German: BOM, semicolons, decimal commas; hours sum the quarter hours', async () => {
    const area = seeded.areas[1];
    const csv = await download(`from=${FROM}&to=${TO}&area=${encodeURIComponent(area)}&layout=long&resolution=hour&bom=true`);
    assert.equal(csv.status, 200);
    assert.deepEqual([...csv.body.subarray(0, 3)], [0xef, 0xbb, 0xbf], 'UTF-8 BOM');
    const lines = csv.body.toString('utf8').slice(1).trimEnd().split('\r\n');
    assert.equal(lines[0], 'start;end;meter_id;meter;area;commodity;unit;quantity');
    const meter = seeded.meterIds[1];
    const hours = await series(meter, 'hour');
    const rows = lines.slice(1).map((line) => line.split(';'));
    assert.equal(rows.length, hours.length, 'one meter in the area: a row per hour');
    rows.forEach((row, i) => {
      assert.equal(row[2], String(meter));
      assert.equal(row[4], area);
      assert.deepEqual(row.slice(5, 7), ['electricity', 'kWh']);
      assert.match(row[7], /^\d+,\d+$/, 'decimal comma');
      assert.equal(Number(row[7].replace(',', '.')), hours[i].kwh);
    });
  });

  test('the whole site when no meter is named; a day without data is empty, not 0', async () => {
    const csv = await download(
      `from=${seeded.gapDay}&to=${seeded.gapDay.slice(0, 8)}${String(Number(seeded.gapDay.slice(8)) + 1).padStart(2, '0')}&resolution=day&locale=en-US`,
    );
    assert.equal(csv.status, 200);
    const lines = csv.body.toString('utf8').trimEnd().split('\r\n');
    assert.equal(lines[0].split(',').length, 2 + 1 + seeded.meterIds.length, 'every meter, the main incomer too');
    assert.deepEqual(lines[1].split(',').slice(2), Array(1 + seeded.meterIds.length).fill(''));
  });

  test('XLSX opens in LibreOffice with German and English settings and carries the same numbers', async () => {
    const ids = seeded.meterIds.slice(0, 2);
    const xlsx = await download(`from=${FROM}&to=${TO}&meterIds=${ids.join(',')}&format=xlsx&resolution=hour`);
    assert.equal(xlsx.status, 200, xlsx.body.toString());
    assert.equal(xlsx.type, 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet');
    const dir = tempDir('ems-xlsx-');
    const file = path.join(dir, 'export.xlsx');
    fs.writeFileSync(file, xlsx.body);
    // Two spreadsheet engines' settings: German (decimal comma, ';' between fields) and US English.
    const convert = async (lang: string, filter: string, out: string) => {
      await run(
        'soffice',
        [
          '--headless',
          `-env:UserInstallation=file://${dir}/profile-${lang}`,
          '--convert-to',
          `csv:Text - txt - csv (StarCalc):${filter}`,
          '--outdir',
          path.join(dir, out),
          file,
        ],
        {
          env: { ...process.env, LANG: `${lang}.UTF-8`, LC_ALL: `${lang}.UTF-8` },
          timeout: 120_000,
        },
      );
      return fs
        .readFileSync(path.join(dir, out, 'export.csv'), 'utf8')
        .trimEnd()
        .split(/\r?\n/);
    };
    const [german, english] = await Promise.all([convert('de_DE', '59,34,76,1,,1031', 'de'), convert('en_US', '44,34,76,1,,1033', 'en')]);
    const hours = await Promise.all(ids.map((id) => series(id, 'hour')));
    assert.equal(german.length, 1 + hours[0].length);
    assert.equal(german[0], `start;end;${ids.map((id, i) => `Sub-meter ${i + 1} (${id}) electricity kWh`).join(';')}`);
    for (let row = 0; row < hours[0].length; row += 1) {
      const de = german[row + 1].split(';');
      const en = english[row + 1].split(',');
      assert.equal(de[0], en[0]);
      assert.equal(Date.parse(de[0]), Date.parse(hours[0][row].start));
      ids.forEach((_, m) => {
        const expected = hours[m][row].kwh!;
        // The cells are numbers shown with three decimals, the way each locale writes them.
        assert.match(de[2 + m], /^\d+,\d{3}$/, `de row ${row} meter ${m}`);
        assert.match(en[2 + m], /^\d+\.\d{3}$/, `en row ${row} meter ${m}`);
        assert.ok(Math.abs(Number(de[2 + m].replace(',', '.')) - expected) <= 0.0005 + 1e-9, `de row ${row} meter ${m}: ${de[2 + m]} vs ${expected}`);
        assert.equal(de[2 + m].replace(',', '.'), en[2 + m]);
      });
    }
  });

  test('gas and water columns say m³: the commodity and unit per meter column (wide) and per row (long), values as the series API', async () => {
    const { energy, db } = server.service.deps;
    const gas = energy.meters.create({ name: 'Gas', code: 'meter.gas.m3', kind: 'energy', commodity: 'gas', area: 'Utilities' }, null).id;
    const water = energy.meters.create({ name: 'Water', code: 'meter.water.m3', kind: 'energy', commodity: 'water', area: 'Utilities' }, null).id;
    for (const day of ['2026-10-24', '2026-10-25', '2026-10-26']) {
      const { start, count } = dayIntervals(TIMEZONE, day);
      const values = (base: number) => Float32Array.from({ length: count }, (_, i) => base + (i % 10) / 100);
      db.sqlite.transaction(() =>
        energy.store.save([
          { meterId: gas, day, start, kwh: values(1.5), flags: new Uint8Array(count), maxKw: null },
          { meterId: water, day, start, kwh: values(0.2), flags: new Uint8Array(count), maxKw: null },
        ]),
      )();
    }
    const sub = seeded.meterIds[0];
    const wide = (await download(`from=${FROM}&to=${TO}&meterIds=${gas},${water},${sub}&resolution=hour&locale=en-GB`)).body
      .toString('utf8')
      .trimEnd()
      .split('\r\n');
    assert.equal(wide[0], `start,end,Gas (${gas}) gas m³,Water (${water}) water m³,Sub-meter 1 (${sub}) electricity kWh`);
    const [gasHours, waterHours] = await Promise.all([series(gas, 'hour'), series(water, 'hour')]);
    wide.slice(1).forEach((line, i) => {
      const cells = line.split(',');
      assert.equal(Number(cells[2]), gasHours[i].kwh, `gas m³ hour ${i}`);
      assert.equal(Number(cells[3]), waterHours[i].kwh, `water m³ hour ${i}`);
    });
    const long = (await download(`from=${FROM}&to=${TO}&area=Utilities&layout=long&resolution=day&locale=en-GB`)).body.toString('utf8').trimEnd().split('\r\n');
    assert.equal(long[0], 'start,end,meter_id,meter,area,commodity,unit,quantity');
    const rows = long.slice(1).map((line) => line.split(','));
    assert.equal(rows.length, 6, 'two meters × three days');
    assert.deepEqual(
      rows.filter((row) => row[2] === String(gas)).map((row) => row.slice(5, 7)),
      Array(3).fill(['gas', 'm³']),
    );
    assert.deepEqual(
      rows.filter((row) => row[2] === String(water)).map((row) => row.slice(5, 7)),
      Array(3).fill(['water', 'm³']),
    );
  });

  test('bad requests are 4xx naming the problem', async () => {
    const cases: [string, number, RegExp][] = [
      [`from=${TO}&to=${FROM}`, 400, /query\.to/],
      ['from=2025-01-01&to=2026-06-01', 400, /at most 366 days/],
      [`from=${FROM}&to=${TO}&meterIds=1,abc`, 400, /query\.meterIds/],
      [`from=${FROM}&to=${TO}&meterIds=99999`, 404, /99999/],
      [`from=${FROM}&to=${TO}&area=Nowhere`, 404, /Nowhere/],
      [`from=${FROM}&to=${TO}&area=x&meterIds=1`, 400, /not both/],
      [`from=${FROM}&to=${TO}&format=pdf`, 400, /query\.format/],
      ['from=2025-11-01&to=2026-11-01&area=Bulk&layout=long&format=xlsx', 400, /more than a sheet holds/],
    ];
    // 30 meters × 366 days × 100 quarter hours would pass the 1,048,576 rows of a sheet.
    const { energy } = server.service.deps;
    for (let i = 0; i < 30; i += 1) energy.meters.create({ name: `Bulk ${i}`, code: `meter.bulk.${i}.kwh`, kind: 'energy', area: 'Bulk' }, null);
    for (const [query, status, message] of cases) {
      const response = await server.request('GET', `/api/exports/energy?${query}`, { token: viewer.accessToken });
      assert.equal(response.status, status, `${query}: ${response.text}`);
      assert.match(response.text, message, query);
    }
    assert.equal((await fetch(`${server.url}/api/exports/energy?from=${FROM}&to=${TO}`)).status, 401);
  });
});
