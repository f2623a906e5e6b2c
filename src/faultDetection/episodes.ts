// The episodes the rules found, each tied to its record in the faults resource (facility's, through its face): opened
// once per episode, its waste kept current while it holds, "not a fault" kept with its reason and counted per rule.
import { and, desc, eq, gt, gte, isNull, sql } from 'drizzle-orm';
import type { Actor, AuditLog } from '../platform/db/auditTrail.ts';
import type { FaultService } from '../facility/index.ts';
import type { Db } from '../platform/db/client.ts';
import { slot } from '../platform/db/listQuery.ts';
import { fddEpisodes } from '../platform/db/schema/index.ts';
import { BadRequest, Conflict, NotFound } from '../platform/errors.ts';
import type { EpisodeState } from './engine.ts';
import type { RuleDefinitionView } from './schemas.ts';

export type EpisodeRow = typeof fddEpisodes.$inferSelect;
const DAY_MS = 86_400_000;
/** The longest snooze: a fault put off for longer is a "not a fault" or a maintenance job. */
export const MAX_SNOOZE_DAYS = 90;
const SERVICE_ACTOR = { id: null, username: 'fault-detection' };

/** kWh per day over the episode's span (a span under a day counts as a day: a two-hour fault is not priced ×12). */
export function perDay(state: Pick<EpisodeState, 'startedAt' | 'lastSeenAt' | 'wasteKwh'>): number {
  return state.wasteKwh / Math.max(1, (state.lastSeenAt - state.startedAt) / DAY_MS);
}

export class Episodes {
  private readonly insert;
  private readonly byId;
  private readonly openFor;
  private readonly ranked;
  private readonly rankedOpen;
  private readonly openedSince;
  private readonly counts;
  private readonly snoozedFor;
  private readonly ofEquipment;
  private readonly openTotal;

  constructor(
    private readonly db: Db,
    private readonly faults: FaultService,
    private readonly audit: AuditLog,
    /** The clock a snooze is checked against (the detector's). */
    private readonly now: () => number = Date.now,
  ) {
    this.openTotal = db.orm
      .select({ n: sql<number>`count(*)` })
      .from(fddEpisodes)
      .where(and(isNull(fddEpisodes.endedAt), isNull(fddEpisodes.notAFaultAt)))
      .prepare();
    this.ofEquipment = db.orm
      .select()
      .from(fddEpisodes)
      .where(eq(fddEpisodes.equipment, sql.placeholder('equipment')))
      .orderBy(desc(fddEpisodes.startedAt), desc(fddEpisodes.id))
      .limit(sql.placeholder('limit'))
      .prepare();
    this.snoozedFor = db.orm
      .select()
      .from(fddEpisodes)
      .where(
        and(
          eq(fddEpisodes.ruleId, sql.placeholder('ruleId')),
          eq(fddEpisodes.equipment, sql.placeholder('equipment')),
          gt(fddEpisodes.snoozedUntil, sql.placeholder('at')),
          isNull(fddEpisodes.notAFaultAt),
        ),
      )
      .orderBy(desc(fddEpisodes.id))
      .limit(1)
      .prepare();
    this.insert = db.orm
      .insert(fddEpisodes)
      .values({
        ruleId: slot('ruleId'),
        ruleVersion: slot('ruleVersion'),
        equipment: slot('equipment'),
        startedAt: slot('startedAt'),
        lastSeenAt: slot('lastSeenAt'),
        evidence: slot('evidence'),
        wasteKwh: slot('wasteKwh'),
        heldHours: slot('heldHours'),
        wasteKwhPerDay: slot('wasteKwhPerDay'),
        wasteMoneyPerDay: slot('wasteMoneyPerDay'),
        method: slot('method'),
        faultId: slot('faultId'),
      })
      .returning({ id: fddEpisodes.id })
      .prepare();
    this.byId = db.orm
      .select()
      .from(fddEpisodes)
      .where(eq(fddEpisodes.id, sql.placeholder('id')))
      .prepare();
    this.openFor = db.orm
      .select()
      .from(fddEpisodes)
      .where(and(eq(fddEpisodes.ruleId, sql.placeholder('ruleId')), eq(fddEpisodes.equipment, sql.placeholder('equipment')), isNull(fddEpisodes.endedAt)))
      .prepare();
    const order = [desc(fddEpisodes.wasteMoneyPerDay), desc(fddEpisodes.id)];
    this.ranked = db.orm
      .select()
      .from(fddEpisodes)
      .orderBy(...order)
      .limit(sql.placeholder('limit'))
      .prepare();
    this.rankedOpen = db.orm
      .select()
      .from(fddEpisodes)
      .where(isNull(fddEpisodes.endedAt))
      .orderBy(...order)
      .limit(sql.placeholder('limit'))
      .prepare();
    this.openedSince = db.orm
      .select({ n: sql<number>`count(*)` })
      .from(fddEpisodes)
      .where(and(eq(fddEpisodes.ruleId, sql.placeholder('ruleId')), gte(fddEpisodes.startedAt, sql.placeholder('since'))))
      .prepare();
    this.counts = db.orm
      .select({ ruleId: fddEpisodes.ruleId, hits: sql<number>`count(*)`, notAFault: sql<number>`count(${fddEpisodes.notAFaultAt})` })
      .from(fddEpisodes)
      .groupBy(fddEpisodes.ruleId)
      .prepare();
  }

  /** The open episode of a rule on an equipment (one survives a restart: the runner carries on with it). */
  open(ruleId: string, equipment: string): EpisodeRow | undefined {
    return this.openFor.get({ ruleId, equipment });
  }

  /** Opens an episode and its fault record, in one transaction. */
  start(rule: RuleDefinitionView, equipment: string, state: EpisodeState, price: number): number {
    return this.db.sqlite.transaction(() => {
      const kwhPerDay = perDay(state);
      const fault = this.faults.create(
        {
          device: equipment,
          code: rule.id,
          description: `${rule.title} (rule ${rule.id} v${rule.version}, ${rule.source.scheme} ${rule.source.ref}). Estimated waste ${kwhPerDay.toFixed(1)} kWh/day: ${rule.waste.method}.`,
          severity: rule.severity,
          reportedAt: new Date(state.startedAt).toISOString(),
        },
        SERVICE_ACTOR,
      );
      return this.insert.get({
        ruleId: rule.id,
        ruleVersion: rule.version,
        equipment,
        startedAt: new Date(state.startedAt).toISOString(),
        lastSeenAt: new Date(state.lastSeenAt).toISOString(),
        evidence: JSON.stringify(state.evidence),
        wasteKwh: state.wasteKwh,
        heldHours: state.heldHours,
        wasteKwhPerDay: kwhPerDay,
        wasteMoneyPerDay: kwhPerDay * price,
        method: rule.waste.method,
        faultId: fault.id,
      })!.id;
    })();
  }

  /** The episode's figures as they stand (and its end when `state.endedAt` is set). */
  touch(id: number, state: EpisodeState, price: number): void {
    const kwhPerDay = perDay(state);
    this.db.orm
      .update(fddEpisodes)
      .set({
        lastSeenAt: new Date(state.lastSeenAt).toISOString(),
        endedAt: state.endedAt === null ? null : new Date(state.endedAt).toISOString(),
        evidence: state.evidence,
        wasteKwh: state.wasteKwh,
        heldHours: state.heldHours,
        wasteKwhPerDay: kwhPerDay,
        wasteMoneyPerDay: kwhPerDay * price,
      })
      .where(eq(fddEpisodes.id, id))
      .run();
  }

  get(id: number): EpisodeRow {
    const row = this.byId.get({ id });
    if (!row) throw new NotFound(`no fault-detection episode ${id}`);
    return row;
  }

  /** Episodes by money wasted per day, highest first. */
  list(limit: number, openOnly: boolean): EpisodeRow[] {
    return openOnly ? this.rankedOpen.all({ limit }) : this.ranked.all({ limit });
  }

  /** An equipment's episodes, newest first. */
  ofUnit(equipment: string, limit: number): EpisodeRow[] {
    return this.ofEquipment.all({ equipment, limit });
  }

  /** Episodes still going on (not ended, not "not a fault"): the wallboard's count. */
  openCount(): number {
    return this.openTotal.get()?.n ?? 0;
  }

  /** How many episodes the rule opened since `since` (ISO): the flood guard's count. */
  countSince(ruleId: string, since: string): number {
    return this.openedSince.get({ ruleId, since })?.n ?? 0;
  }

  /** Episodes found and marked "not a fault", per rule. */
  countsByRule(): Map<string, { hits: number; notAFault: number }> {
    return new Map(this.counts.all().map((row) => [row.ruleId, { hits: row.hits, notAFault: row.notAFault }]));
  }

  /**
   * The episode of a rule on an equipment snoozed past `at` (epoch ms), if any: while it is, the rule holding again
   * continues that episode instead of opening a new one.
   */
  snoozed(ruleId: string, equipment: string, at: number): EpisodeRow | undefined {
    return this.snoozedFor.get({ ruleId, equipment, at: new Date(at).toISOString() });
  }

  /** A snoozed episode the rule holds on again: open once more, its figures carried on from `state`. */
  resume(id: number, state: EpisodeState, price: number): void {
    this.touch(id, { ...state, endedAt: null }, price);
  }

  /**
   * A person's snooze until `until` (ISO, in the future, at most MAX_SNOOZE_DAYS ahead), audited. The episode and its
   * fault record stay as they are; until then the rule finding the fault again on the equipment continues this episode.
   */
  snooze(id: number, until: string, reason: string | undefined, actor: Actor): EpisodeRow {
    const now = this.now();
    const row = this.get(id);
    if (row.notAFaultAt) throw new Conflict(`episode ${id} is marked not a fault; there is nothing to snooze`);
    const at = Date.parse(until);
    if (!(at > now)) throw new BadRequest('until must be in the future', [{ path: 'body.until', message: 'must be in the future' }]);
    if (at > now + MAX_SNOOZE_DAYS * DAY_MS)
      throw new BadRequest(`a snooze lasts at most ${MAX_SNOOZE_DAYS} days`, [
        { path: 'body.until', message: `must be at most ${MAX_SNOOZE_DAYS} days ahead` },
      ]);
    const after = { snoozedUntil: new Date(at).toISOString(), snoozedBy: actor.username, snoozeReason: reason ?? null };
    this.db.sqlite.transaction(() => {
      this.db.orm.update(fddEpisodes).set(after).where(eq(fddEpisodes.id, id)).run();
      this.audit.record({
        actor,
        action: 'snooze',
        resource: 'fdd_episodes',
        resourceId: id,
        before: { snoozedUntil: row.snoozedUntil, snoozedBy: row.snoozedBy, snoozeReason: row.snoozeReason },
        after,
      });
    })();
    return this.get(id);
  }

  /**
   * A snooze lifted before its end, audited (action `unsnooze`): from now the rule finding the fault again opens a new
   * episode and fault record as usual, and an episode still open carries on as any other. 409 when nothing is snoozed.
   */
  unsnooze(id: number, actor: Actor): EpisodeRow {
    const row = this.get(id);
    if (!row.snoozedUntil || Date.parse(row.snoozedUntil) <= this.now()) throw new Conflict(`episode ${id} is not snoozed`);
    const before = { snoozedUntil: row.snoozedUntil, snoozedBy: row.snoozedBy, snoozeReason: row.snoozeReason };
    const after = { snoozedUntil: null, snoozedBy: null, snoozeReason: null };
    this.db.sqlite.transaction(() => {
      this.db.orm.update(fddEpisodes).set(after).where(eq(fddEpisodes.id, id)).run();
      this.audit.record({ actor, action: 'unsnooze', resource: 'fdd_episodes', resourceId: id, before, after });
    })();
    return this.get(id);
  }

  /** A person's "not a fault": the reason is kept, the episode ends, its fault record is closed. */
  notAFault(id: number, reason: string, actor: { id: number; username: string }): EpisodeRow {
    const row = this.get(id);
    if (row.notAFaultAt) throw new Conflict(`episode ${id} is already marked not a fault`);
    const at = new Date().toISOString();
    this.db.sqlite.transaction(() => {
      this.db.orm
        .update(fddEpisodes)
        .set({ notAFaultReason: reason, notAFaultAt: at, endedAt: row.endedAt ?? row.lastSeenAt })
        .where(eq(fddEpisodes.id, id))
        .run();
      if (row.faultId !== null) this.faults.update(row.faultId, { status: 'closed' }, actor);
    })();
    return this.get(id);
  }
}
