// The rule engine on known series: persistence before an episode opens, the hold-off that keeps an edge-riding rule from
// flapping, missing values neither holding nor clearing, windows that need their span seen, and the rule check.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CompiledRule, RuleRunner, type EquipmentModel } from '../../src/faultDetection/engine.ts';
import { RULE_LIBRARY } from '../../src/faultDetection/library.ts';
import { checkRule } from '../../src/faultDetection/rules.ts';
import type { RuleDefinitionView } from '../../src/faultDetection/schemas.ts';

const MIN = 60_000;
const T0 = Date.UTC(2026, 2, 2, 9);

const rule: RuleDefinitionView = {
  id: 'test-high',
  version: 1,
  title: 'Value above 10',
  description: 'test',
  source: { scheme: 'EMS', ref: 'test' },
  equipmentType: 'AHU',
  inputs: { v: 'Supply_Air_Temperature_Sensor' },
  mode: 'any',
  condition: { op: 'gt', args: [{ p: 'v' }, 10] },
  persistenceMinutes: 15,
  clearMinutes: 30,
  severity: 'low',
  waste: { method: 'v − 10 kW', kw: { op: 'sub', args: [{ p: 'v' }, 10] } },
};
const unit: EquipmentModel = { name: 'AHU-T', type: 'AHU', params: {}, points: new Map([['Supply_Air_Temperature_Sensor', 'sat']]) };

function feed(series: Array<number | undefined>, definition = rule) {
  const runner = new RuleRunner(new CompiledRule(definition), unit, 5 * MIN, () => 12);
  return series.map((value, i) => runner.step(T0 + i * 5 * MIN, () => value));
}

test('an episode opens once the condition held for its persistence, and its waste counts from the first sample', () => {
  const runner = new RuleRunner(new CompiledRule(rule), unit, 5 * MIN, () => 12);
  const results = [5, 12, 12, 12, 12].map((v, i) => runner.step(T0 + i * 5 * MIN, () => v));
  // Held from +5 min: at +15 it has held 10 minutes, at +20 (the fifth sample) 15, and the episode opens.
  assert.deepEqual(results, ['none', 'none', 'none', 'none', 'opened']);
  assert.equal(runner.episode!.startedAt, T0 + 5 * MIN);
  // 2 kW × 5 minutes per held sample, four samples.
  assert.ok(Math.abs(runner.episode!.wasteKwh - (4 * 2 * 5) / 60) < 1e-9, String(runner.episode!.wasteKwh));
});

test('a rule riding its threshold stays one episode; it ends only after the hold-off', () => {
  const edge = [12, 12, 12, 12, 9, 12, 9, 12, 9, 9, 12, 9, 9, 9, 9, 9, 9, 9];
  const results = feed(edge);
  assert.equal(results.filter((r) => r === 'opened').length, 1);
  assert.equal(results.filter((r) => r === 'ended').length, 1);
  // The last hold is sample 10; false from sample 11; the hold-off of 30 minutes passes at sample 17.
  assert.equal(results.indexOf('ended'), 17);
});

test('a missing value neither holds nor clears', () => {
  const results = feed([12, 12, undefined, undefined, 12, 12, undefined, undefined, undefined, undefined, undefined, undefined, undefined, 12]);
  assert.equal(results.filter((r) => r === 'opened').length, 1);
  assert.equal(results.includes('ended'), false);
});

test('a flat-line window needs its span seen before it can hold', () => {
  const flat: RuleDefinitionView = {
    ...rule,
    id: 'test-flat',
    condition: { op: 'lt', args: [{ fn: 'span', p: 'v', minutes: 30 }, 0.05] },
    persistenceMinutes: 0,
  };
  const results = feed([20, 20, 20, 20, 20, 20, 20, 20], flat);
  // Samples every 5 minutes: the window of 30 minutes is seen from the seventh sample (0 … 30 min).
  assert.equal(results.indexOf('opened'), 6);
  const moving = feed([20, 20.2, 20, 20.2, 20, 20.2, 20, 20.2], flat);
  assert.equal(moving.includes('opened'), false);
});

test('every library rule passes the check; bad rules are named by path', () => {
  assert.ok(RULE_LIBRARY.length >= 12);
  for (const libraryRule of RULE_LIBRARY) assert.deepEqual(checkRule(libraryRule), [], libraryRule.id);
  assert.deepEqual(
    checkRule({ ...rule, condition: { op: 'xor', args: [1, 2] } }).map((e) => e.path),
    ['body.condition.op'],
  );
  assert.deepEqual(
    checkRule({ ...rule, inputs: { v: 'Supply_Air_Temp' } }).map((e) => e.path),
    ['body.inputs.v'],
  );
  assert.deepEqual(
    checkRule({ ...rule, waste: { method: 'x', kw: 0 } }).map((e) => e.path),
    ['body.waste.method'],
  );
  assert.deepEqual(
    checkRule({ ...rule, waste: { method: 'per param', kw: { param: 'airKwPerK' } } }).map((e) => e.path),
    ['body.waste.kw.param'],
  );
  assert.deepEqual(
    checkRule({ ...rule, condition: { fn: 'span', p: 'v', minutes: 2 } }).map((e) => e.path),
    ['body.condition.minutes'],
  );
});

test("a replay's column steps decide as the live steps do, missing values and waste alike", () => {
  const series = [5, 12, 12, undefined, 12, 12, 12, 9, 12, 9, 9, 9, 9, 9, 9, 9, 13, 14, 15, 16, 17, 9];
  const live = new RuleRunner(new CompiledRule(rule), unit, 5 * MIN, () => 12);
  const column = new RuleRunner(new CompiledRule(rule), unit, 5 * MIN, () => 12);
  column.evidenceEverySample = false;
  const grid = Float64Array.from(series, (v) => (v === undefined ? Number.NaN : v));
  const episodes: Array<[number, number, number]> = [];
  series.forEach((value, k) => {
    const at = T0 + k * 5 * MIN;
    const a = live.step(at, () => value);
    const b = column.stepColumns(at, [grid], k);
    assert.equal(b, a, `step ${k}`);
    if (live.episode) {
      assert.equal(column.episode!.wasteKwh, live.episode.wasteKwh);
      episodes.push([k, live.episode.startedAt, column.episode!.startedAt]);
    }
  });
  assert.ok(episodes.length > 0, 'the series opens an episode');
  for (const [k, a, b] of episodes) assert.equal(b, a, `episode start at step ${k}`);
});
