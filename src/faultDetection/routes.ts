// /api/fdd: the point model (suggest, confirm, CSV in and out, Brick Turtle), equipment figures, the rules (list with
// hits and "not a fault" rate, save a version, switch, replay on history) and the episodes ranked by money.
import { Type } from '@sinclair/typebox';
import type { GatewayPort } from '../gateway/index.ts';
import type { IncomingMessage } from 'node:http';
import { AppError, BadGateway, NotFound, PayloadTooLarge, UnsupportedMediaType } from '../platform/errors.ts';
import { defineRoute, Reply } from '../platform/http/route.ts';
import { ErrorBody } from '../platform/http/schemas.ts';
import type { FaultDetector } from './detector.ts';
import type { EpisodeRow, Episodes } from './episodes.ts';
import { RULE_LIBRARY } from './library.ts';
import type { PointModel } from './pointModel.ts';
import type { RuleBook } from './ruleBook.ts';
import {
  CodeParams,
  Episode,
  EpisodeListQuery,
  Equipment,
  EquipmentParams,
  EquipmentParamsBody,
  EquipmentView,
  Evidence,
  IdParam,
  ImportOutcome,
  NotAFaultBody,
  PointMapping,
  PointMappingBody,
  ReplayBody,
  ReplayOutcome,
  RuleDefinition,
  RuleParams,
  RuleSummary,
  RuleSwitchBody,
  SnoozeBody,
  Suggestion,
  type EpisodeView,
  type RuleDefinitionView,
} from './schemas.ts';
import { round } from '../platform/numbers.ts';

const tags = ['fault detection'];
const HOUR_MS = 3_600_000;
/** The longest stretch of history an evidence chart reads. */
const EVIDENCE_MAX_MS = 14 * 24 * HOUR_MS;

/** The context's services, with the gateway port the suggestions read and the site's price the waste is priced at. */
export type FaultDetection = {
  pointModel: PointModel;
  ruleBook: RuleBook;
  episodes: Episodes;
  detector: FaultDetector;
  gateway: GatewayPort;
  price: () => { price: number; currency: string };
};

export type FaultDetectionRouteNeeds = { faultDetection: FaultDetection };

export function faultDetectionRoutes({ faultDetection }: FaultDetectionRouteNeeds) {
  const { pointModel, ruleBook, episodes, detector, gateway, price } = faultDetection;
  const present = (row: EpisodeRow): EpisodeView => {
    const rule = ruleBook.version(row.ruleId, row.ruleVersion);
    return {
      id: row.id,
      ruleId: row.ruleId,
      ruleVersion: row.ruleVersion,
      title: rule?.title ?? row.ruleId,
      equipment: row.equipment,
      startedAt: row.startedAt,
      lastSeenAt: row.lastSeenAt,
      endedAt: row.endedAt,
      evidence: row.evidence,
      wasteKwh: round(row.wasteKwh, 3),
      wasteKwhPerDay: round(row.wasteKwhPerDay, 3),
      wasteMoneyPerDay: round(row.wasteMoneyPerDay, 3),
      currency: price().currency,
      method: row.method,
      faultId: row.faultId,
      notAFault: row.notAFaultAt ? { reason: row.notAFaultReason ?? '', at: row.notAFaultAt } : null,
      snoozed: row.snoozedUntil ? { until: row.snoozedUntil, by: row.snoozedBy ?? '', reason: row.snoozeReason } : null,
    };
  };
  const summary = (rule: RuleDefinitionView) => {
    const on = ruleBook.switchOf().get(rule.id) ?? { enabled: true, paused: null };
    const counts = episodes.countsByRule().get(rule.id) ?? { hits: 0, notAFault: 0 };
    return {
      id: rule.id,
      version: rule.version,
      title: rule.title,
      source: rule.source,
      equipmentType: rule.equipmentType,
      enabled: on.enabled,
      paused: on.paused,
      status: detector.status(rule),
      hits: counts.hits,
      notAFault: counts.notAFault,
      notAFaultRate: counts.hits ? round(counts.notAFault / counts.hits, 3) : null,
      definition: rule,
    };
  };
  return [
    defineRoute({
      method: 'GET',
      path: '/api/fdd/points',
      access: 'viewer',
      summary: 'The confirmed point model',
      description: 'Every gateway code given an equipment and a Brick class, with its unit. Changes nothing.',
      tags,
      schemas: { response: { 200: Type.Array(PointMapping) } },
      handler: () => pointModel.list(),
    }),
    defineRoute({
      method: 'GET',
      path: '/api/fdd/points/suggestions',
      access: 'admin',
      summary: "The gateway's codes with a suggested equipment and class",
      description:
        "Reads the gateway's catalogue; each code not yet mapped gets a guess from its name and unit (null where nothing fits), to be confirmed. Changes nothing.",
      tags,
      schemas: { response: { 200: Type.Array(Suggestion), 502: ErrorBody } },
      handler: async () => {
        const catalogue = await gateway.codes();
        if (!catalogue) throw new BadGateway('the gateway has no point catalogue');
        return pointModel.suggestions(catalogue);
      },
    }),
    defineRoute({
      method: 'PUT',
      path: '/api/fdd/points/:code',
      access: 'admin',
      summary: "Confirm a code's equipment, Brick class and unit",
      description: 'A unit that contradicts the class (a temperature class in kW) is refused, naming the field.',
      example: { equipment: 'AHU-1', equipmentType: 'AHU', brickClass: 'Supply_Air_Temperature_Sensor', unit: '°C' },
      tags,
      schemas: { params: CodeParams, body: PointMappingBody, response: { 200: PointMapping, 400: ErrorBody } },
      handler: ({ params, body }) => pointModel.confirm(params.code, body),
    }),
    defineRoute({
      method: 'DELETE',
      path: '/api/fdd/points/:code',
      access: 'admin',
      summary: "Forget a code's mapping",
      description: 'The code leaves the model; rules that needed it show "cannot run".',
      tags,
      schemas: { params: CodeParams, response: { 204: Type.Null(), 404: ErrorBody } },
      handler: ({ params }) => {
        pointModel.forget(params.code);
        return new Reply(204, null);
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/api/fdd/points/import',
      access: 'admin',
      summary: 'Import the point model from CSV',
      description:
        "Header code,equipment,equipmentType,brickClass,unit (the export's own format). All or nothing: one bad line refuses the file (400, each bad line named with its number and field) and nothing is written.",
      rawBody: { contentType: 'text/csv' },
      tags,
      schemas: { response: { 200: ImportOutcome, 400: ErrorBody, 413: ErrorBody, 415: ErrorBody } },
      handler: async ({ ctx }) => {
        if (!ctx.is('text/csv', 'text/plain')) throw new UnsupportedMediaType('Send the CSV as the body (Content-Type: text/csv)');
        return pointModel.importCsv(await readText(ctx.req, 2 * 1024 * 1024));
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/api/fdd/points/export.csv',
      access: 'viewer',
      summary: 'The point model as CSV',
      description: 'The same columns the import reads. Changes nothing.',
      raw: { contentType: 'text/csv' },
      tags,
      schemas: { response: { 200: Type.String() } },
      handler: ({ ctx }) => {
        ctx.status = 200;
        ctx.type = 'text/csv; charset=utf-8';
        ctx.set('content-disposition', 'attachment; filename="point-model.csv"');
        ctx.body = pointModel.exportCsv();
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/api/fdd/model.ttl',
      access: 'viewer',
      summary: 'The point model as Brick Turtle',
      description: 'Each equipment with its Brick class; each point with its class, brick:isPointOf and its QUDT unit. Changes nothing.',
      raw: { contentType: 'text/turtle' },
      tags,
      schemas: { response: { 200: Type.String() } },
      handler: ({ ctx }) => {
        ctx.status = 200;
        ctx.type = 'text/turtle; charset=utf-8';
        ctx.body = pointModel.turtle();
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/api/fdd/model.ttl',
      access: 'admin',
      summary: 'Import the point model from Brick Turtle',
      description:
        "The export's own form, or a Brick graph in the same terms: each point with ems:gatewayCode, its Brick class, brick:isPointOf an equipment of a Brick class EMS knows, brick:hasUnit. All or nothing: one bad point or unreadable line refuses the file (400, naming the line) and nothing is written.",
      rawBody: { contentType: 'text/turtle' },
      tags,
      schemas: { response: { 200: ImportOutcome, 400: ErrorBody, 413: ErrorBody, 415: ErrorBody } },
      handler: async ({ ctx }) => {
        if (!ctx.is('text/turtle', 'text/plain', 'application/x-turtle'))
          throw new UnsupportedMediaType('Send the Turtle as the body (Content-Type: text/turtle)');
        return pointModel.importTurtle(await readText(ctx.req, 2 * 1024 * 1024));
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/api/fdd/equipment',
      access: 'viewer',
      summary: 'Equipment with its points and rated figures',
      description: "Every equipment some point names; params are the type's defaults overlaid by its own. Changes nothing.",
      tags,
      schemas: { response: { 200: Type.Array(Equipment) } },
      handler: () =>
        pointModel.equipment().map((unit) => ({
          name: unit.name,
          type: unit.type,
          params: unit.params,
          points: [...unit.points].map(([brickClass, code]) => ({ code, brickClass, unit: pointModel.list().find((row) => row.code === code)?.unit ?? '' })),
        })),
    }),
    defineRoute({
      method: 'GET',
      path: '/api/fdd/equipment/:name',
      access: 'viewer',
      summary: 'One equipment: its points with their latest values, and its faults',
      description:
        "The points as mapped, each with the gateway's latest value (null and gateway 'unreachable' when the gateway is away: the rest still answers), and the equipment's episodes, newest first. Changes nothing.",
      tags,
      schemas: { params: EquipmentParams, response: { 200: EquipmentView, 404: ErrorBody } },
      handler: async ({ params }) => {
        const unit = pointModel.equipment().find((u) => u.name === params.name);
        if (!unit) throw new NotFound(`no equipment ${params.name} in the point model`);
        const rows = pointModel.list().filter((row) => row.equipment === params.name);
        let gatewayState: 'ok' | 'unreachable' = 'ok';
        const latest = new Map<string, { value: number | null; at: number | null; good: boolean }>();
        try {
          for (const v of await gateway.values(rows.map((row) => row.code)))
            latest.set(v.code, { value: typeof v.value === 'boolean' ? Number(v.value) : v.value, at: v.at, good: v.good });
        } catch (error) {
          if (!(error instanceof AppError)) throw error;
          gatewayState = 'unreachable';
        }
        return {
          name: unit.name,
          type: unit.type,
          params: unit.params,
          gateway: gatewayState,
          points: rows.map((row) => {
            const v = latest.get(row.code);
            return {
              code: row.code,
              brickClass: row.brickClass,
              unit: row.unit,
              value: v?.value ?? null,
              at: v?.at == null ? null : new Date(v.at).toISOString(),
              good: v?.good ?? false,
            };
          }),
          episodes: episodes.ofUnit(unit.name, 100).map(present),
        };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/api/fdd/episodes/:id/evidence',
      access: 'viewer',
      summary: "An episode's evidence: the rule's points on one time axis around the fault's span",
      description:
        "Each input of the rule version that found it, read from the gateway's history over the span with a margin either side (at most 14 days, at most 500 samples per point as the gateway answers), and the span to shade. Changes nothing.",
      tags,
      schemas: { params: IdParam, response: { 200: Evidence, 404: ErrorBody, 502: ErrorBody } },
      handler: async ({ params }) => {
        const row = episodes.get(params.id);
        const rule = ruleBook.version(row.ruleId, row.ruleVersion) ?? ruleBook.get(row.ruleId);
        const unit = pointModel.equipment().find((u) => u.name === row.equipment);
        const units = new Map(pointModel.list().map((p) => [p.code, p.unit]));
        const start = Date.parse(row.startedAt);
        const end = Date.parse(row.endedAt ?? row.lastSeenAt);
        const margin = Math.max(HOUR_MS, (end - start) * 0.25);
        const to = Math.min(end + margin, Math.max(end, Date.now()));
        const from = Math.max(start - margin, to - EVIDENCE_MAX_MS);
        const series = await Promise.all(
          Object.entries(rule.inputs).map(async ([name, brickClass]) => {
            const code = unit?.points.get(brickClass) ?? null;
            const history = code ? ((await gateway.history(code, from, to)) ?? []) : [];
            return {
              name,
              brickClass,
              code,
              unit: code ? (units.get(code) ?? '') : '',
              at: history.map((h) => new Date(h.at).toISOString()),
              value: history.map((h) => h.value),
            };
          }),
        );
        return {
          episodeId: row.id,
          ruleId: row.ruleId,
          ruleVersion: row.ruleVersion,
          equipment: row.equipment,
          from: new Date(from).toISOString(),
          to: new Date(to).toISOString(),
          span: { from: row.startedAt, to: row.endedAt ?? row.lastSeenAt },
          series,
        };
      },
    }),
    defineRoute({
      method: 'PUT',
      path: '/api/fdd/equipment/:name',
      access: 'admin',
      summary: "Set an equipment's rated figures",
      description: 'Airflow (airKwPerK), capacities, COP, efficiencies: what the waste methods use.',
      example: { type: 'AHU', params: { airKwPerK: 6.03, heatingEff: 0.98 } },
      tags,
      schemas: { params: EquipmentParams, body: EquipmentParamsBody, response: { 204: Type.Null(), 400: ErrorBody } },
      handler: ({ params, body }) => {
        pointModel.setEquipment(params.name, body.type, body.params);
        return new Reply(204, null);
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/api/fdd/rules',
      access: 'viewer',
      summary: 'The rules with their status, hits and "not a fault" rate',
      description: 'The newest version of each rule; status says per equipment whether it runs or what it is missing. Changes nothing.',
      tags,
      schemas: { response: { 200: Type.Array(RuleSummary) } },
      handler: () => [...ruleBook.current().values()].map(summary),
    }),
    defineRoute({
      method: 'PUT',
      path: '/api/fdd/rules/:id',
      access: 'admin',
      summary: 'Save a rule as its next version',
      description:
        'A malformed rule is refused naming the field; a rule naming a class no point has is saved and shown as "cannot run". A new rule starts switched off. Past episodes keep the version that found them.',
      example: RULE_LIBRARY[0],
      tags,
      schemas: { params: RuleParams, body: RuleDefinition, response: { 200: RuleSummary, 400: ErrorBody } },
      handler: ({ params, body }) => summary(ruleBook.save(params.id, body)),
    }),
    defineRoute({
      method: 'PUT',
      path: '/api/fdd/rules/:id/switch',
      access: 'admin',
      summary: 'Switch a rule on or off (on lifts a flood pause)',
      description: 'enabled true also lifts a pause the flood guard set.',
      example: { enabled: true },
      tags,
      schemas: { params: RuleParams, body: RuleSwitchBody, response: { 200: RuleSummary, 404: ErrorBody } },
      handler: ({ params, body }) => {
        ruleBook.setEnabled(params.id, body.enabled);
        return summary(ruleBook.get(params.id));
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/api/fdd/rules/:id/replay',
      access: 'operator',
      readOnly: true,
      summary: 'Run a rule over a past period of history',
      description: "What the rule (or a definition not yet saved) would have found: its episodes and their waste. Reads the gateway's history; writes nothing.",
      example: { from: '2026-01-01T00:00:00Z', to: '2026-02-01T00:00:00Z' },
      tags,
      schemas: { params: RuleParams, body: ReplayBody, response: { 200: ReplayOutcome, 400: ErrorBody, 404: ErrorBody } },
      handler: async ({ params, body }) => {
        const rule = body.definition ?? ruleBook.get(params.id);
        const { price: perKwh, currency } = price();
        const found = await detector.replay(rule, {
          from: Date.parse(body.from),
          to: Date.parse(body.to),
          equipment: body.equipment,
          stepMinutes: body.stepMinutes,
        });
        const episodesOut = found.episodes.map((e) => ({
          equipment: e.equipment,
          startedAt: new Date(e.startedAt).toISOString(),
          lastSeenAt: new Date(e.lastSeenAt).toISOString(),
          endedAt: e.endedAt === null ? null : new Date(e.endedAt).toISOString(),
          wasteKwh: round(e.wasteKwh, 3),
          wasteMoney: round(e.wasteKwh * perKwh, 3),
        }));
        const wasteKwh = found.episodes.reduce((sum, e) => sum + e.wasteKwh, 0);
        return {
          ruleId: rule.id,
          ruleVersion: rule.version,
          from: new Date(body.from).toISOString(),
          to: new Date(body.to).toISOString(),
          episodes: episodesOut,
          wasteKwh: round(wasteKwh, 3),
          wasteMoney: round(wasteKwh * perKwh, 3),
          currency,
          cannotRun: found.cannotRun,
        };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/api/fdd/episodes',
      access: 'viewer',
      summary: 'Faults found by the rules, ranked by money wasted per day',
      description: 'Highest waste first; each with its rule version, evidence, waste and method, and its record in /api/faults. Changes nothing.',
      tags,
      schemas: { query: EpisodeListQuery, response: { 200: Type.Array(Episode) } },
      handler: ({ query }) => episodes.list(query.limit, query.open === true).map(present),
    }),
    defineRoute({
      method: 'POST',
      path: '/api/fdd/episodes/:id/not-a-fault',
      access: 'operator',
      summary: 'Mark an episode "not a fault", with a reason',
      description: 'The reason is kept and counted against the rule; the episode ends and its fault record is closed.',
      example: { reason: 'Night purge on purpose during the heat wave' },
      tags,
      schemas: { params: IdParam, body: NotAFaultBody, response: { 200: Episode, 404: ErrorBody, 409: ErrorBody } },
      handler: ({ params, body, user }) => present(episodes.notAFault(params.id, body.reason, { id: user.id, username: user.username })),
    }),
    defineRoute({
      method: 'POST',
      path: '/api/fdd/episodes/:id/snooze',
      access: 'operator',
      summary: 'Snooze an episode until a time',
      description:
        'Until then the rule finding the fault again on the equipment continues this episode instead of opening a new one (no new fault record). At most 90 days ahead; audited.',
      example: { until: '2026-12-01T08:00:00Z', reason: 'Valve replacement booked for Monday' },
      tags,
      schemas: { params: IdParam, body: SnoozeBody, response: { 200: Episode, 400: ErrorBody, 404: ErrorBody, 409: ErrorBody } },
      handler: ({ params, body, user }) => present(episodes.snooze(params.id, body.until, body.reason, { id: user.id, username: user.username })),
    }),
    defineRoute({
      method: 'DELETE',
      path: '/api/fdd/episodes/:id/snooze',
      access: 'operator',
      summary: 'Lift a snooze before its end',
      description:
        'From now the rule finding the fault again opens a new episode and fault record as usual; an episode still open carries on. Audited (action unsnooze); 409 when the episode is not snoozed.',
      tags,
      schemas: { params: IdParam, response: { 200: Episode, 404: ErrorBody, 409: ErrorBody } },
      handler: ({ params, user }) => present(episodes.unsnooze(params.id, { id: user.id, username: user.username })),
    }),
  ];
}

/** The raw body as text, refused past `limit` bytes. */
async function readText(req: IncomingMessage, limit: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) throw new PayloadTooLarge(`A point model file is at most ${limit} bytes`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}
