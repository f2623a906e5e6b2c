// Fault detection over HTTP (issue 54): the service against the gateway simulator's HVAC plant on the test's clock. The
// point model (suggest, confirm, a unit that contradicts its class refused, CSV and Turtle), rules as data (a malformed
// rule refused naming the field, a rule missing a class saved as "cannot run"), the live evaluation opening one fault per
// episode with its waste, "not a fault" counted per rule, the flood guard under parallel evaluations, and a replay.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RULE_LIBRARY } from '../../src/faultDetection/library.ts';
import { ReportContentBuilder } from '../../src/reporting/reports/content.ts';
import { simulatorRig, MIN, DAY, type SimulatorRig } from '../helpers/rig.ts';

/** Monday 12 January 2026, 08:00 UTC: a working day in winter (the plant heats and free-cools). */
const MONDAY = Date.UTC(2026, 0, 12, 8);

async function plantRig(
  faults: Array<{ kind: 'leaking-valve' | 'stuck-damper' | 'schedule-override' | 'drifting-sensor'; from: number; to: number }> = [],
  env: Record<string, string> = {},
  historyStep = true,
) {
  return simulatorRig({ start: MONDAY, simulator: { equipment: { faults }, historyStep }, env });
}

/** Confirms every suggestion that has an equipment and a class (what an admin does on the mapping screen). */
async function confirmSuggestions(rig: SimulatorRig): Promise<number> {
  const suggestions = await rig.get('/api/fdd/points/suggestions');
  let confirmed = 0;
  for (const s of suggestions)
    if (s.equipment && s.brickClass && s.code.match(/^(ahu1|vav|chiller1|hw)\./)) {
      const response = await rig.server.request('PUT', `/api/fdd/points/${encodeURIComponent(s.code)}`, {
        token: rig.admin.accessToken,
        body: { equipment: s.equipment, equipmentType: s.equipmentType, brickClass: s.brickClass, unit: s.unit },
      });
      assert.equal(response.status, 200, response.text);
      confirmed++;
    }
  return confirmed;
}

/** Evaluates at every 5 minutes from the clock's time to `until`, as the job does at each collection. */
async function evaluateUntil(rig: SimulatorRig, until: number, stepMs = 5 * MIN): Promise<void> {
  const detector = rig.server.service.deps.faultDetection.detector;
  while (rig.clock.now < until) {
    rig.clock.now += stepMs;
    await detector.evaluate();
  }
}

test('suggestions map the plant; a unit that contradicts its class is refused naming the field; CSV round trip and Brick Turtle', async () => {
  const rig = await plantRig();
  try {
    const suggestions = await rig.get('/api/fdd/points/suggestions');
    const sat = suggestions.find((s: { code: string }) => s.code === 'ahu1.sat');
    assert.deepEqual(
      { equipment: sat.equipment, type: sat.equipmentType, brickClass: sat.brickClass, unit: sat.unit, mapped: sat.mapped },
      { equipment: 'AHU-1', type: 'AHU', brickClass: 'Supply_Air_Temperature_Sensor', unit: '°C', mapped: false },
    );
    const hcv = suggestions.find((s: { code: string }) => s.code === 'ahu1.hcv');
    assert.equal(hcv.brickClass, 'Heating_Valve');
    const token = rig.admin.accessToken;
    const wrong = await rig.server.request('PUT', '/api/fdd/points/ahu1.sat', {
      token,
      body: { equipment: 'AHU-1', equipmentType: 'AHU', brickClass: 'Supply_Air_Temperature_Sensor', unit: 'kW' },
    });
    assert.equal(wrong.status, 400);
    assert.equal(wrong.body.details[0].path, 'body.unit');
    assert.match(wrong.body.details[0].message, /measures temperature/);
    const unknown = await rig.server.request('PUT', '/api/fdd/points/ahu1.sat', {
      token,
      body: { equipment: 'AHU-1', equipmentType: 'AHU', brickClass: 'Supply_Air_Temp', unit: '°C' },
    });
    assert.equal(unknown.status, 400);
    assert.equal(unknown.body.details[0].path, 'body.brickClass');
    assert.equal((await rig.get('/api/fdd/points')).length, 0, 'nothing written by the refusals');

    const confirmed = await confirmSuggestions(rig);
    assert.ok(confirmed >= 20, `confirmed ${confirmed}`);
    const csv = await rig.server.request('GET', '/api/fdd/points/export.csv', { token });
    assert.equal(csv.status, 200);
    assert.match(csv.text, /^code,equipment,equipmentType,brickClass,unit\r\n/);
    assert.match(csv.text, /ahu1\.sat,AHU-1,AHU,Supply_Air_Temperature_Sensor,°C/);
    // Import, all or nothing: a file with one bad line is refused naming the line and field, and nothing is written.
    const csvImport = (raw: string) => rig.server.request('POST', '/api/fdd/points/import', { token, raw, headers: { 'content-type': 'text/csv' } });
    const before = await rig.get('/api/fdd/points');
    const bad = await csvImport(
      'code,equipment,equipmentType,brickClass,unit\nahu1.sat,AHU-2,AHU,Supply_Air_Temperature_Sensor,°C\nahu1.oad,AHU-1,AHU,Outside_Air_Damper_Position_Sensor,kWh\nahu1.sat,AHU-3,AHU,Supply_Air_Temperature_Sensor,°C\n',
    );
    assert.equal(bad.status, 400, bad.text);
    assert.deepEqual(
      bad.body.details.map((d: { path: string }) => d.path),
      ['line 3', 'line 4'],
    );
    assert.match(bad.body.details[0].message, /^unit:/);
    assert.match(bad.body.details[1].message, /^code: ahu1\.sat is also on line 2/);
    assert.deepEqual(await rig.get('/api/fdd/points'), before, 'nothing written');
    // The export's own format comes back as it went out; then a good change is written.
    assert.equal((await csvImport(csv.text)).body.imported, before.length);
    assert.deepEqual(
      (await rig.get('/api/fdd/points')).map((p: { updatedAt?: string }) => ({ ...p, updatedAt: undefined })),
      before.map((p: { updatedAt?: string }) => ({ ...p, updatedAt: undefined })),
    );
    const good = await csvImport('code,equipment,equipmentType,brickClass,unit\nahu1.sat,AHU-2,AHU,Supply_Air_Temperature_Sensor,°C\n');
    assert.equal(good.status, 200, good.text);
    assert.equal(good.body.imported, 1);
    const points = await rig.get('/api/fdd/points');
    assert.equal(points.find((p: { code: string }) => p.code === 'ahu1.sat').equipment, 'AHU-2');
    assert.equal(points.find((p: { code: string }) => p.code === 'ahu1.oad').unit, '%');
    const ttl = await rig.server.request('GET', '/api/fdd/model.ttl', { token });
    assert.equal(ttl.status, 200);
    assert.match(ttl.text, /@prefix brick: <https:\/\/brickschema\.org\/schema\/Brick#> \./);
    assert.match(
      ttl.text,
      /ems:point_ahu1_2e_sat a brick:Supply_Air_Temperature_Sensor ;\n {2}brick:isPointOf ems:equipment_AHU-2 ;\n {2}brick:hasUnit unit:DEG_C ;/,
    );
    assert.match(ttl.text, /ems:equipment_Chiller-1 a brick:Chiller ;/);

    // Turtle in: the export round-trips (every point back as it was, after the model was emptied)…
    const ttlImport = (raw: string) => rig.server.request('POST', '/api/fdd/model.ttl', { token, raw, headers: { 'content-type': 'text/turtle' } });
    const model = await rig.get('/api/fdd/points');
    const strip = (rows: Array<Record<string, unknown>>) => rows.map(({ updatedAt: _, ...rest }) => rest);
    for (const p of model) await rig.server.request('DELETE', `/api/fdd/points/${encodeURIComponent(p.code)}`, { token });
    assert.equal((await rig.get('/api/fdd/points')).length, 0);
    const back = await ttlImport(ttl.text);
    assert.equal(back.status, 200, back.text);
    assert.equal(back.body.imported, model.length);
    assert.deepEqual(strip(await rig.get('/api/fdd/points')), strip(model));
    // …a graph in Brick's own terms (hasPoint from the equipment, QUDT units, a comment) is read…
    const integrator = [
      '@prefix brick: <https://brickschema.org/schema/Brick#> .',
      'PREFIX unit: <http://qudt.org/vocab/unit/>',
      '@prefix ems: <urn:ems:model#> .',
      '@prefix b: <urn:site:b1#> .',
      "# the integrator's AHU 7",
      'b:ahu7 a brick:AHU ; brick:hasPoint b:sat7, b:fan7 .',
      'b:sat7 a brick:Supply_Air_Temperature_Sensor ; brick:hasUnit unit:DEG_C ; ems:gatewayCode "ahu7.sat" .',
      'b:fan7 a brick:Supply_Fan_Status ; ems:gatewayCode "ahu7.sf"^^<http://www.w3.org/2001/XMLSchema#string> .',
    ].join('\n');
    const read = await ttlImport(integrator);
    assert.equal(read.status, 200, read.text);
    const seven = (await rig.get('/api/fdd/points')).filter((p: { equipment: string }) => p.equipment === 'ahu7');
    assert.deepEqual(
      seven.map((p: Record<string, string>) => [p.code, p.equipmentType, p.brickClass, p.unit]),
      [
        ['ahu7.sat', 'AHU', 'Supply_Air_Temperature_Sensor', '°C'],
        ['ahu7.sf', 'AHU', 'Supply_Fan_Status', ''],
      ],
    );
    // …and a bad point or an unreadable line refuses the file, naming the line; nothing is written.
    const wrongUnit = ttl.text.replace(
      /(ems:point_ahu1_2e_mat a brick:Mixed_Air_Temperature_Sensor ;\n(?: {2}.*\n)*? {2})brick:hasUnit unit:DEG_C ;\n {2}ems:unit "°C" ;/,
      '$1brick:hasUnit unit:KiloW ;',
    );
    assert.notEqual(wrongUnit, ttl.text);
    const matLine = wrongUnit.split('\n').findIndex((l) => l.startsWith('ems:point_ahu1_2e_mat ')) + 1;
    const afterAll = await rig.get('/api/fdd/points');
    const refusedUnit = await ttlImport(wrongUnit.replace('ems:equipment_AHU-2 a brick:AHU', 'ems:equipment_AHU-2 a brick:AHU_Nonesuch'));
    assert.equal(refusedUnit.status, 400, refusedUnit.text);
    assert.ok(
      refusedUnit.body.details.some((d: { path: string; message: string }) => d.path === `line ${matLine}` && /^unit:/.test(d.message)),
      JSON.stringify(refusedUnit.body.details),
    );
    assert.ok(
      refusedUnit.body.details.some((d: { message: string }) => /^equipmentType: .*AHU-2/.test(d.message)),
      JSON.stringify(refusedUnit.body.details),
    );
    const broken = await ttlImport('@prefix brick: <https://brickschema.org/schema/Brick#> .\n\nfoo:x a brick:AHU .\n');
    assert.equal(broken.status, 400);
    assert.deepEqual(broken.body.details, [{ path: 'line 3', message: 'unknown prefix "foo:"' }]);
    assert.deepEqual(await rig.get('/api/fdd/points'), afterAll, 'nothing written by the refusals');
  } finally {
    await rig.close();
  }
});

test('rules are data: the library of 16 lists its sources; a malformed rule is refused naming the field; a missing class is "cannot run"', async () => {
  const rig = await plantRig();
  try {
    await confirmSuggestions(rig);
    const rules = await rig.get('/api/fdd/rules');
    assert.ok(rules.length >= 12, `${rules.length} rules`);
    const leak = rules.find((r: { id: string }) => r.id === 'ahu-heating-coil-leak');
    assert.deepEqual(leak.source, { scheme: 'G36', ref: 'FC#15' });
    assert.deepEqual(leak.status, ['runs on AHU-1']);
    const night = rules.find((r: { id: string }) => r.id === 'meter-night-base-load');
    assert.deepEqual(night.status, ['cannot run: no Meter equipment is mapped']);
    const token = rig.admin.accessToken;
    const { definition } = leak;
    const malformed = await rig.server.request('PUT', '/api/fdd/rules/ahu-heating-coil-leak', {
      token,
      body: { ...definition, condition: { op: 'gt', args: [{ p: 'sat' }, { p: 'nonesuch' }] } },
    });
    assert.equal(malformed.status, 400);
    assert.equal(malformed.body.details[0].path, 'body.condition.args[1].p');
    const badShape = await rig.server.request('PUT', '/api/fdd/rules/ahu-heating-coil-leak', { token, body: { ...definition, persistenceMinutes: -5 } });
    assert.equal(badShape.status, 400);
    assert.match(badShape.body.details[0].path, /persistenceMinutes/);
    // A new rule naming a class no AHU point has: saved, switched off, shown as cannot run.
    const custom = {
      ...definition,
      id: 'ahu-static-pressure-low',
      title: 'Duct static pressure low',
      inputs: { dsp: 'Supply_Air_Static_Pressure_Sensor' },
      params: [],
      let: {},
      condition: { op: 'lt', args: [{ p: 'dsp' }, 100] },
      waste: { method: 'not estimated', kw: 0 },
    };
    const saved = await rig.server.request('PUT', '/api/fdd/rules/ahu-static-pressure-low', { token, body: custom });
    assert.equal(saved.status, 200, saved.text);
    assert.equal(saved.body.version, 1);
    assert.equal(saved.body.enabled, false);
    assert.deepEqual(saved.body.status, ['cannot run: missing Supply_Air_Static_Pressure_Sensor on AHU-1']);
    // A change is a new version; the old one is kept.
    const again = await rig.server.request('PUT', '/api/fdd/rules/ahu-static-pressure-low', {
      token,
      body: { ...custom, title: 'Duct static pressure too low' },
    });
    assert.equal(again.body.version, 2);
    assert.equal(rig.server.service.deps.faultDetection.ruleBook.version('ahu-static-pressure-low', 1)?.title, 'Duct static pressure low');
  } finally {
    await rig.close();
  }
});

test('a leaking valve opens one fault in /api/faults within persistence + one evaluation, priced, ranked, and "not a fault" counts', async () => {
  const leakFrom = MONDAY + 60 * MIN; // 09:00, free cooling with the hot-water loop on
  const rig = await plantRig([{ kind: 'leaking-valve', from: leakFrom, to: MONDAY + 2 * DAY }], { EMS_METRICS_TOKEN: 'fdd-metrics-token-0123456789' });
  try {
    await confirmSuggestions(rig);
    const token = rig.admin.accessToken;
    await rig.server.request('PUT', '/api/configs', { token, body: { electricityPrice: 0.3, currency: 'EUR' } });
    await evaluateUntil(rig, leakFrom + 30 * MIN + 5 * MIN);
    const episodes = await rig.get('/api/fdd/episodes');
    const leak = episodes.filter((e: { ruleId: string }) => e.ruleId === 'ahu-heating-coil-leak');
    assert.equal(leak.length, 1, JSON.stringify(episodes));
    assert.equal(leak[0].startedAt, new Date(leakFrom).toISOString(), 'held from the first evaluation of the leak');
    assert.equal(leak[0].equipment, 'AHU-1');
    assert.ok(leak[0].evidence.rise > 3, JSON.stringify(leak[0].evidence));
    const fault = await rig.get(`/api/faults/${leak[0].faultId}`);
    assert.equal(fault.device, 'AHU-1');
    assert.equal(fault.code, 'ahu-heating-coil-leak');
    assert.equal(fault.severity, 'high');
    assert.match(fault.description, /G36 FC#15/);
    // The rest of the working day: still one episode (no flapping), waste growing at ≈ 22.5 kW ÷ 0.98.
    await evaluateUntil(rig, MONDAY + 10 * 60 * MIN);
    const [current] = (await rig.get('/api/fdd/episodes')).filter((e: { ruleId: string }) => e.ruleId === 'ahu-heating-coil-leak');
    assert.equal(current.id, leak[0].id);
    const heldHours = (Date.parse(current.lastSeenAt) - Date.parse(current.startedAt)) / 3_600_000 + 5 / 60;
    assert.ok(Math.abs(current.wasteKwh / heldHours - 22.5 / 0.98) < 2, `${current.wasteKwh} kWh over ${heldHours} h`);
    assert.equal(current.currency, 'EUR');
    assert.ok(Math.abs(current.wasteMoneyPerDay - current.wasteKwhPerDay * 0.3) < 0.01);
    // /metrics: the engine's evaluations (one per 5-minute step from 08:00 to 18:00) and their time.
    const metrics = await rig.server.request('GET', '/metrics', { headers: { authorization: 'Bearer fdd-metrics-token-0123456789' } });
    assert.equal(metrics.status, 200);
    assert.match(metrics.text, /^ems_fdd_evaluations_total 120$/m);
    assert.match(metrics.text, /^ems_fdd_rule_runners \d+$/m);
    assert.ok(Number(/^ems_fdd_evaluation_seconds_total (\S+)$/m.exec(metrics.text)![1]) > 0);
    const faults = await rig.get('/api/faults?q=ahu-heating-coil-leak');
    assert.equal(faults.total, 1, 'one fault record per episode');
    // Ranked by money: the leak first.
    assert.equal((await rig.get('/api/fdd/episodes'))[0].ruleId, 'ahu-heating-coil-leak');
    // The equipment view: its points with the gateway's latest values, and its faults.
    const ahu = await rig.get('/api/fdd/equipment/AHU-1');
    const mapped = (await rig.get('/api/fdd/points')).filter((p: { equipment: string }) => p.equipment === 'AHU-1');
    assert.equal(ahu.gateway, 'ok');
    assert.deepEqual(ahu.points.map((p: { code: string }) => p.code).sort(), mapped.map((p: { code: string }) => p.code).sort());
    const sat = ahu.points.find((p: { code: string }) => p.code === 'ahu1.sat');
    assert.equal(sat.good, true);
    assert.ok(Number.isFinite(sat.value) && sat.value > 5 && sat.value < 40, JSON.stringify(sat));
    assert.deepEqual(
      ahu.episodes.map((e: { id: number }) => e.id),
      (await rig.get('/api/fdd/episodes?limit=500'))
        .filter((e: { equipment: string }) => e.equipment === 'AHU-1')
        .map((e: { id: number }) => e.id)
        .sort((a: number, b: number) => b - a),
    );
    assert.equal((await rig.server.request('GET', '/api/fdd/equipment/AHU-9', { token })).status, 404);
    // The evidence: the rule's points over the span with a margin, the span to shade; the leak shows in them.
    const evidence = await rig.get(`/api/fdd/episodes/${current.id}/evidence`);
    assert.deepEqual(
      evidence.series.map((s: { name: string }) => s.name),
      ['sat', 'mat', 'hcv', 'ccv'],
    );
    assert.deepEqual(evidence.span, { from: current.startedAt, to: current.lastSeenAt });
    assert.ok(evidence.from < current.startedAt && evidence.to > current.lastSeenAt, JSON.stringify([evidence.from, evidence.to]));
    const byName = Object.fromEntries(evidence.series.map((s: { name: string; at: string[]; value: number[] }) => [s.name, s]));
    for (const s of evidence.series) {
      assert.ok(s.at.length >= 20, `${s.name}: ${s.at.length} samples`);
      assert.ok(
        s.at.every((at: string) => at >= evidence.from && at <= evidence.to),
        s.name,
      );
    }
    // Inside the span the air leaves warmer than it came, past the fan heat (the leak's signature).
    const within = (at: string) => at >= current.startedAt && at <= current.lastSeenAt;
    const riseAt = (i: number) => byName.sat.value[i] - byName.mat.value[byName.mat.at.indexOf(byName.sat.at[i])];
    const inside = byName.sat.at.map((at: string, i: number) => (within(at) ? i : -1)).filter((i: number) => i >= 0);
    assert.ok(inside.length > 0);
    assert.ok(inside.filter((i: number) => riseAt(i) > 1.5 + 1.2).length > inside.length / 2, 'the rise shows in the span');
    assert.equal(byName.sat.unit, '°C');

    // The monthly report of January: the costliest equipment faults with their waste, the leak among them.
    const { db, energy } = rig.server.service.deps;
    const report = new ReportContentBuilder(db, energy.site).build('monthly-energy', 'January', Date.UTC(2026, 1, 5, 12));
    const table = report.tables.find((t) => t.key === 'equipment-faults')!;
    const ranked = (await rig.get('/api/fdd/episodes?limit=500')).filter((e: { notAFault: unknown }) => !e.notAFault);
    assert.deepEqual(
      table.rows.map((row) => [row[0], row[1], row[6]]),
      ranked.map((e: { equipment: string; ruleId: string; wasteMoneyPerDay: number }) => [e.equipment, e.ruleId, Math.round(e.wasteMoneyPerDay * 100) / 100]),
    );
    assert.equal(table.rows[0]![1], 'ahu-heating-coil-leak');
    assert.equal(table.rows[0]![4], Math.round(current.wasteKwh * 10) / 10);
    const december = new ReportContentBuilder(db, energy.site).build('monthly-energy', 'December', Date.UTC(2026, 0, 5, 12));
    assert.deepEqual(december.tables.find((t) => t.key === 'equipment-faults')!.rows, [], 'a month before the fault lists none');
    // The wallboard (public, no token): the count only.
    const board = async () => (await rig.server.request('GET', '/api/wallboard')).body;
    const ongoing = (await rig.get('/api/fdd/episodes?open=true&limit=500')).length;
    assert.ok(ongoing >= 1);
    assert.equal((await board()).equipmentFaults, ongoing);
    const operator = await rig.server.createUser({ role: 'operator' });
    const dismissed = await rig.server.request('POST', `/api/fdd/episodes/${current.id}/not-a-fault`, {
      token: operator.accessToken,
      body: { reason: 'commissioning test of the coil' },
    });
    assert.equal(dismissed.status, 200, dismissed.text);
    assert.deepEqual(dismissed.body.notAFault.reason, 'commissioning test of the coil');
    assert.equal((await rig.get(`/api/faults/${current.faultId}`)).status, 'closed');
    assert.equal((await board()).equipmentFaults, ongoing - 1, 'not a fault: no longer counted');
    const twice = await rig.server.request('POST', `/api/fdd/episodes/${current.id}/not-a-fault`, { token: operator.accessToken, body: { reason: 'again' } });
    assert.equal(twice.status, 409);
    const short = await rig.server.request('POST', `/api/fdd/episodes/${current.id}/not-a-fault`, { token: operator.accessToken, body: { reason: '' } });
    assert.equal(short.status, 400);
    assert.equal(short.body.details[0].path, 'body.reason');
    const rule = (await rig.get('/api/fdd/rules')).find((r: { id: string }) => r.id === 'ahu-heating-coil-leak');
    assert.ok(rule.hits >= 1);
    assert.equal(rule.notAFault, 1);
    assert.equal(rule.notAFaultRate, 1 / rule.hits);
  } finally {
    await rig.close();
  }
});

test('a rule that would flood is paused with an alert, at its limit, under parallel evaluations', async () => {
  // 30 air handlers on the same points (an integrator's copy-paste): the override opens 30 episodes at once, the limit is 5.
  const rig = await plantRig([{ kind: 'schedule-override', from: MONDAY, to: MONDAY + DAY }], { EMS_FDD_FLOOD_PER_HOUR: '5' });
  try {
    const token = rig.admin.accessToken;
    const classes: Record<string, string> = {
      'ahu1.sf': 'Supply_Fan_Status',
      'ahu1.occ': 'Occupancy_Command',
      'ahu1.sf.kw': 'Electric_Power_Sensor',
      'ahu1.sat': 'Supply_Air_Temperature_Sensor',
      'ahu1.mat': 'Mixed_Air_Temperature_Sensor',
      'ahu1.ccv': 'Cooling_Valve',
    };
    const units: Record<string, string> = { 'ahu1.sf': '', 'ahu1.occ': '', 'ahu1.sf.kw': 'kW', 'ahu1.sat': '°C', 'ahu1.mat': '°C', 'ahu1.ccv': '%' };
    // The CSV names a code once; aliases of the same code are what the gateway would list per unit: one code per AHU here.
    const { pointModel } = rig.server.service.deps.faultDetection;
    for (let n = 1; n <= 30; n++)
      for (const [code, brickClass] of Object.entries(classes))
        pointModel.confirm(`${code}#${n}`, { equipment: `AHU-${n}`, equipmentType: 'AHU', brickClass, unit: units[code]! });
    // The gateway knows ahu1.*; the aliases read the same values (a relay of one AHU's points).
    const { detector } = rig.server.service.deps.faultDetection;
    const port = (detector as unknown as { needs: { port: { values(codes: string[]): Promise<unknown[]> } } }).needs.port;
    const values = port.values.bind(port);
    port.values = async (codes: string[]) => {
      const rows = (await values([...new Set(codes.map((c) => c.split('#')[0]!))])) as Array<{ code: string }>;
      return codes.map((code) => ({ ...rows.find((row) => row.code === code.split('#')[0])!, code }));
    };
    // Monday 19:00: the schedule ends, the fan keeps running.
    rig.clock.now = MONDAY + 11 * 60 * MIN;
    for (let step = 0; step < 8; step++) {
      rig.clock.now += 5 * MIN;
      await Promise.all([detector.evaluate(), detector.evaluate(), detector.evaluate()]);
    }
    const opened = (await rig.get('/api/fdd/episodes?limit=500')).filter((e: { ruleId: string }) => e.ruleId === 'ahu-fan-out-of-schedule');
    assert.equal(opened.length, 5, 'exactly the limit opened');
    const rule = (await rig.get('/api/fdd/rules')).find((r: { id: string }) => r.id === 'ahu-fan-out-of-schedule');
    assert.match(rule.paused.reason, /opened 5 faults within an hour \(limit 5/);
    const alerts = await rig.get('/api/alerts?q=ahu-fan-out-of-schedule');
    assert.equal(alerts.total, 1);
    // Switched on again by a person: the pause is lifted.
    const on = await rig.server.request('PUT', '/api/fdd/rules/ahu-fan-out-of-schedule/switch', { token, body: { enabled: true } });
    assert.equal(on.status, 200);
    assert.equal(on.body.paused, null);
  } finally {
    await rig.close();
  }
});

/** A 3-day replay of the fan rule, and how many codes/history answers on a grid the simulator gave. */
async function replayFan(rig: SimulatorRig, token: string) {
  const building = rig.sim.building;
  const onGrid = building.historyOnGrid.bind(building);
  const gridAnswers: string[] = [];
  building.historyOnGrid = (...args) => {
    gridAnswers.push(args[0]);
    return onGrid(...args);
  };
  const replay = await rig.server.request('POST', '/api/fdd/rules/ahu-fan-out-of-schedule/replay', {
    token,
    body: { from: new Date(MONDAY).toISOString(), to: new Date(MONDAY + 3 * DAY).toISOString() },
  });
  return { replay, gridAnswers };
}

test('try before trust: a replay over the gateway history finds the override and its waste, writes nothing, refuses a bad period; a gateway ignoring the step answers the same', async () => {
  const overrideFrom = MONDAY + 11 * 60 * MIN; // Monday 19:00 to Tuesday 06:00
  const faults = [{ kind: 'schedule-override' as const, from: overrideFrom, to: MONDAY + 22 * 60 * MIN }];
  const rig = await plantRig(faults);
  try {
    await confirmSuggestions(rig);
    rig.clock.now = MONDAY + 3 * DAY;
    const token = rig.admin.accessToken;
    const operator = await rig.server.createUser({ role: 'operator' });
    const { replay, gridAnswers } = await replayFan(rig, operator.accessToken);
    assert.equal(replay.status, 200, replay.text);
    // One answer on the 5-minute grid per code the rule reads (3 days is one slice), none in 500-sample slices.
    assert.equal(new Set(gridAnswers).size, gridAnswers.length, `each code asked once: ${gridAnswers}`);
    assert.ok(gridAnswers.length >= Object.keys(RULE_LIBRARY.find((r) => r.id === 'ahu-fan-out-of-schedule')!.inputs).length, `${gridAnswers}`);
    // The same replay against a gateway that predates the step (its plain answers, read in slices): the same answer.
    const old = await plantRig(faults, {}, false);
    try {
      await confirmSuggestions(old);
      old.clock.now = rig.clock.now;
      const fallback = await replayFan(old, old.admin.accessToken);
      assert.equal(fallback.replay.status, 200, fallback.replay.text);
      assert.equal(fallback.gridAnswers.length, 0);
      assert.deepEqual(fallback.replay.body, replay.body);
    } finally {
      await old.close();
    }
    assert.equal(replay.body.episodes.length, 1, JSON.stringify(replay.body.episodes));
    const [episode] = replay.body.episodes;
    assert.equal(episode.startedAt, new Date(overrideFrom).toISOString());
    const injected = rig.sim.building.plant!.injectedKwh(overrideFrom, MONDAY + 22 * 60 * MIN);
    assert.ok(Math.abs(episode.wasteKwh - injected) / injected < 0.25, `estimated ${episode.wasteKwh} kWh against ${injected} injected`);
    assert.equal((await rig.get('/api/fdd/episodes')).length, 0, 'a replay writes nothing');
    const backwards = await rig.server.request('POST', '/api/fdd/rules/ahu-fan-out-of-schedule/replay', {
      token,
      body: { from: new Date(MONDAY + DAY).toISOString(), to: new Date(MONDAY).toISOString() },
    });
    assert.equal(backwards.status, 400);
    assert.equal(backwards.body.details[0].path, 'body.from');
    const missing = await rig.server.request('POST', '/api/fdd/rules/no-such-rule/replay', {
      token,
      body: { from: new Date(MONDAY).toISOString(), to: new Date(MONDAY + DAY).toISOString() },
    });
    assert.equal(missing.status, 404);
  } finally {
    await rig.close();
  }
});

test('snooze: the fault found again before the snooze ends continues its episode (no new fault); after it, a new one opens; audited', async () => {
  const HOUR = 60 * MIN;
  const evening = (day: number) => MONDAY + day * DAY + 11 * HOUR; // 19:00, the schedule has ended
  const overrides = [0, 1, 2].map((day) => ({ kind: 'schedule-override' as const, from: evening(day), to: evening(day) + 90 * MIN }));
  const rig = await plantRig(overrides);
  try {
    await confirmSuggestions(rig);
    const operator = await rig.server.createUser({ role: 'operator' });
    const token = operator.accessToken;
    const fanEpisodes = async () =>
      (await rig.get('/api/fdd/episodes?limit=500')).filter((e: { ruleId: string; equipment: string }) => e.ruleId === 'ahu-fan-out-of-schedule');
    // Monday evening: the override opens its episode.
    rig.clock.now = evening(0) - 10 * MIN;
    await evaluateUntil(rig, evening(0) + 60 * MIN);
    const [first] = await fanEpisodes();
    assert.ok(first, 'the override opened an episode');
    const past = await rig.server.request('POST', `/api/fdd/episodes/${first.id}/snooze`, {
      token,
      body: { until: new Date(rig.clock.now - MIN).toISOString() },
    });
    assert.equal(past.status, 400);
    assert.equal(past.body.details[0].path, 'body.until');
    const tooLong = await rig.server.request('POST', `/api/fdd/episodes/${first.id}/snooze`, {
      token,
      body: { until: new Date(rig.clock.now + 91 * DAY).toISOString() },
    });
    assert.equal(tooLong.status, 400);
    assert.equal(tooLong.body.details[0].path, 'body.until');
    const until = new Date(MONDAY + 2 * DAY).toISOString(); // Wednesday 08:00
    const snoozed = await rig.server.request('POST', `/api/fdd/episodes/${first.id}/snooze`, {
      token,
      body: { until, reason: 'fan contactor booked for Wednesday' },
    });
    assert.equal(snoozed.status, 200, snoozed.text);
    assert.deepEqual(snoozed.body.snoozed, { until, by: operator.user.username, reason: 'fan contactor booked for Wednesday' });
    const audit = await rig.get(`/api/audit?resource=fdd_episodes&resourceId=${first.id}&action=snooze`);
    assert.equal(audit.total, 1);
    assert.equal(audit.items[0].username, operator.user.username);
    // The episode ends after its hold-off; Tuesday evening the override comes back while snoozed: the same episode.
    await evaluateUntil(rig, evening(1) - 10 * MIN, 30 * MIN);
    assert.notEqual((await fanEpisodes())[0].endedAt, null, 'ended after the hold-off');
    await evaluateUntil(rig, evening(1) + 60 * MIN);
    const tuesday = await fanEpisodes();
    assert.equal(tuesday.length, 1, JSON.stringify(tuesday));
    assert.equal(tuesday[0].id, first.id);
    assert.equal(tuesday[0].endedAt, null, 'open again');
    assert.ok(Date.parse(tuesday[0].lastSeenAt) > evening(1), tuesday[0].lastSeenAt);
    assert.ok(tuesday[0].wasteKwh > first.wasteKwh, 'the waste carries on');
    assert.equal((await rig.get('/api/faults?q=ahu-fan-out-of-schedule')).total, 1, 'no new fault record while snoozed');
    // Wednesday evening, the snooze over: a new episode and its fault.
    await evaluateUntil(rig, evening(2) - 10 * MIN, 30 * MIN);
    await evaluateUntil(rig, evening(2) + 60 * MIN);
    const wednesday = await fanEpisodes();
    assert.equal(wednesday.length, 2, JSON.stringify(wednesday));
    assert.equal((await rig.get('/api/faults?q=ahu-fan-out-of-schedule')).total, 2);
    // "Not a fault" then snooze: nothing to snooze.
    const other = wednesday.find((e: { id: number }) => e.id !== first.id);
    await rig.server.request('POST', `/api/fdd/episodes/${other.id}/not-a-fault`, { token, body: { reason: 'planned late event' } });
    const late = await rig.server.request('POST', `/api/fdd/episodes/${other.id}/snooze`, {
      token,
      body: { until: new Date(rig.clock.now + DAY).toISOString() },
    });
    assert.equal(late.status, 409);
    const viewer = await rig.server.createUser({ role: 'viewer' });
    const refused = await rig.server.request('POST', `/api/fdd/episodes/${first.id}/snooze`, {
      token: viewer.accessToken,
      body: { until: new Date(rig.clock.now + DAY).toISOString() },
    });
    assert.equal(refused.status, 403);
  } finally {
    await rig.close();
  }
});

test('a snooze lifted early: the open episode carries on and ends as usual, the fault found again opens a new one; audited, operators only', async () => {
  const HOUR = 60 * MIN;
  const evening = (day: number) => MONDAY + day * DAY + 11 * HOUR; // 19:00, the schedule has ended
  const rig = await plantRig([0, 1].map((day) => ({ kind: 'schedule-override' as const, from: evening(day), to: evening(day) + 90 * MIN })));
  try {
    await confirmSuggestions(rig);
    const operator = await rig.server.createUser({ role: 'operator' });
    const token = operator.accessToken;
    const fanEpisodes = async () => (await rig.get('/api/fdd/episodes?limit=500')).filter((e: { ruleId: string }) => e.ruleId === 'ahu-fan-out-of-schedule');
    rig.clock.now = evening(0) - 10 * MIN;
    await evaluateUntil(rig, evening(0) + 45 * MIN);
    const [first] = await fanEpisodes();
    assert.ok(first && first.endedAt === null, 'the override opened an episode');
    const notSnoozed = await rig.server.request('DELETE', `/api/fdd/episodes/${first.id}/snooze`, { token });
    assert.equal(notSnoozed.status, 409, 'nothing to lift yet');
    const until = new Date(MONDAY + 3 * DAY).toISOString();
    assert.equal((await rig.server.request('POST', `/api/fdd/episodes/${first.id}/snooze`, { token, body: { until, reason: 'parts ordered' } })).status, 200);
    const viewer = await rig.server.createUser({ role: 'viewer' });
    assert.equal((await rig.server.request('DELETE', `/api/fdd/episodes/${first.id}/snooze`, { token: viewer.accessToken })).status, 403);
    const lifted = await rig.server.request('DELETE', `/api/fdd/episodes/${first.id}/snooze`, { token });
    assert.equal(lifted.status, 200, lifted.text);
    assert.equal(lifted.body.snoozed, null);
    assert.equal(lifted.body.id, first.id);
    const audit = await rig.get(`/api/audit?resource=fdd_episodes&resourceId=${first.id}&action=unsnooze`);
    assert.equal(audit.total, 1);
    assert.equal(audit.items[0].username, operator.user.username);
    assert.equal((await rig.server.request('DELETE', `/api/fdd/episodes/${first.id}/snooze`, { token })).status, 409, 'lifted once');
    assert.equal((await rig.server.request('DELETE', '/api/fdd/episodes/999999/snooze', { token })).status, 404);
    // Still open: it carries on while the override lasts, then ends after its hold-off.
    await evaluateUntil(rig, evening(0) + 80 * MIN);
    const carried = (await fanEpisodes()).find((e: { id: number }) => e.id === first.id);
    assert.equal(carried.endedAt, null);
    assert.ok(carried.wasteKwh > first.wasteKwh, 'the waste carries on');
    await evaluateUntil(rig, evening(1) - 10 * MIN, 30 * MIN);
    assert.notEqual((await fanEpisodes())[0].endedAt, null, 'ended after the hold-off');
    // Tuesday evening, before the lifted snooze's end: a new episode and its own fault record, as without a snooze.
    await evaluateUntil(rig, evening(1) + 60 * MIN);
    const tuesday = await fanEpisodes();
    assert.equal(tuesday.length, 2, JSON.stringify(tuesday));
    assert.equal((await rig.get('/api/faults?q=ahu-fan-out-of-schedule')).total, 2);
  } finally {
    await rig.close();
  }
});
