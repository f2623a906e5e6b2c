// Alerts: filtered pages (a benchmark hot path) and the active → acknowledged → resolved lifecycle with who and when.
import { and, asc, desc, eq, sql } from 'drizzle-orm';
import { retryWhileBusy } from '../../platform/busyRetry.ts';
import type { Actor, AuditLog } from '../../platform/db/auditTrail.ts';
import { AuditedTable, type RowOf } from '../../platform/db/auditedTable.ts';
import type { Db } from '../../platform/db/client.ts';
import { contains, equals, oneOf, timeWindow, type Condition, type PageResult } from '../../platform/db/listQuery.ts';
import { alertNotes, alerts } from '../../platform/db/schema/index.ts';
import { slot } from '../../platform/db/listQuery.ts';
import { count, gte, isNotNull, isNull, like } from 'drizzle-orm';
import { BadRequest, Conflict, NotFound } from '../../platform/errors.ts';
import type { AlertBulkInput, AlertCreateInput, AlertListFilters, AlertNoteView, AlertUpdateInput, AlertView } from './schemas.ts';

/** What a gateway alarm occurrence brings: its key (stable across restarts), when and what. */
export type GatewayAlarm = {
  key: string;
  code: string;
  level: AlertView['level'];
  message: string;
  raisedAt: string;
  clearedAt: string | null;
  detail?: string;
  /**
   * The area its alert is raised in (AlarmAreas), asked only when a new alert is raised: an alert already raised keeps
   * its own, and a poll re-reading known alarms pays nothing for it.
   */
  area?: () => string | null;
};

/** The counts of GET /api/alerts/counts, the overview, the wallboard and the live stream. */
export type AlertCounts = { active: number; critical: number; cleared: number; acknowledged: number; shelved: number; resolved: number };

/** At most this many alerts are changed by one bulk call: a filter cannot start an unbounded write. */
export const BULK_LIMIT = 5000;
/** How long one slice of a bulk action may hold the event loop (and the write lock). */
const BULK_SLICE_MS = 10;
/** No filter: no WHERE term (shared, never changed). */
const NO_CONDITIONS: readonly Condition[] = Object.freeze([]);

type AlertRow = RowOf<typeof alerts>;
type AlertStatus = AlertView['status'];

/** Where each status may go next; an alert never moves backwards. */
const NEXT: Record<AlertStatus, readonly AlertStatus[]> = {
  active: ['acknowledged', 'resolved'],
  acknowledged: ['resolved'],
  resolved: [],
};

export class AlertService {
  private readonly table;
  private readonly insertNote;
  private readonly notesOf;
  private readonly byAlarmKey;
  private readonly openOccurrence;
  private readonly openKeysLike;
  private readonly newestOpenLike;
  private readonly lastOfSource;
  private readonly raisedLike;
  private readonly createdListeners: Array<(alert: AlertView) => void> = [];
  private readonly countsNow;
  private readonly newer;
  private readonly newest;

  constructor(
    private readonly db: Db,
    audit: AuditLog,
    private readonly now: () => number = Date.now,
  ) {
    // The one set of alert counts (issue 53: one truth per count), read by the overview, the work-list's tabs, the
    // wallboard and the live stream alike. Shelved: shelved until a time still ahead, whatever the status.
    const at = sql.placeholder('now');
    const shelvedNow = sql`(${alerts.shelvedUntil} IS NOT NULL AND ${alerts.shelvedUntil} > ${at})`;
    const open = sql`(${alerts.status} = 'active' AND NOT ${shelvedNow})`;
    const inAlarm = sql`(${open} AND ${alerts.clearedAt} IS NULL)`;
    this.countsNow = db.orm
      .select({
        active: sql<number>`coalesce(sum(${inAlarm}), 0)`,
        critical: sql<number>`coalesce(sum(${inAlarm} AND ${alerts.level} = 'critical'), 0)`,
        cleared: sql<number>`coalesce(sum(${open} AND ${alerts.clearedAt} IS NOT NULL), 0)`,
        acknowledged: sql<number>`coalesce(sum(${alerts.status} = 'acknowledged'), 0)`,
        shelved: sql<number>`coalesce(sum(${alerts.status} = 'active' AND ${shelvedNow}), 0)`,
        resolved: sql<number>`coalesce(sum(${alerts.status} = 'resolved'), 0)`,
      })
      .from(alerts)
      .prepare();
    this.newer = db.orm
      .select({ id: alerts.id, level: alerts.level, title: alerts.title, area: alerts.area, occurredAt: alerts.occurredAt })
      .from(alerts)
      .where(sql`${alerts.id} > ${sql.placeholder('after')}`)
      .orderBy(asc(alerts.id))
      .limit(50)
      .prepare();
    this.newest = db.orm
      .select({ id: sql<number>`coalesce(max(${alerts.id}), 0)` })
      .from(alerts)
      .prepare();
    this.insertNote = db.orm
      .insert(alertNotes)
      .values({ alertId: slot('alertId'), kind: slot('kind'), text: slot('text'), userId: slot('userId'), username: slot('username'), at: slot('at') })
      .returning({ id: alertNotes.id })
      .prepare();
    this.notesOf = db.orm
      .select()
      .from(alertNotes)
      .where(eq(alertNotes.alertId, sql.placeholder('alertId')))
      .orderBy(asc(alertNotes.id))
      .prepare();
    this.byAlarmKey = db.orm
      .select({ id: alerts.id, clearedAt: alerts.clearedAt })
      .from(alerts)
      .where(eq(alerts.alarmKey, sql.placeholder('key')))
      .prepare();
    // Walks the partial index alerts_open_alarm_idx (migration 0006): only gateway alerts not yet cleared.
    this.openOccurrence = db.orm
      .select({ id: alerts.id, clearedAt: alerts.clearedAt })
      .from(alerts)
      .where(
        and(
          eq(alerts.source, sql.placeholder('source')),
          isNotNull(alerts.alarmKey),
          isNull(alerts.clearedAt),
          eq(alerts.title, sql.placeholder('title')),
          eq(alerts.level, sql.placeholder('level')),
        ),
      )
      .orderBy(desc(alerts.id))
      .limit(1)
      .prepare();
    // The questions other contexts ask of their own gateway-style alerts (metering's data watch): keys are `code@occurrence`.
    this.openKeysLike = db.orm
      .select({ alarmKey: alerts.alarmKey })
      .from(alerts)
      .where(and(like(alerts.alarmKey, sql.placeholder('pattern')), isNull(alerts.clearedAt)))
      .prepare();
    this.newestOpenLike = db.orm
      .select({ alarmKey: alerts.alarmKey })
      .from(alerts)
      .where(and(like(alerts.alarmKey, sql.placeholder('pattern')), isNull(alerts.clearedAt)))
      .orderBy(desc(alerts.id))
      .limit(1)
      .prepare();
    this.lastOfSource = db.orm
      .select({ id: alerts.id, alarmKey: alerts.alarmKey, clearedAt: alerts.clearedAt, status: alerts.status })
      .from(alerts)
      .where(and(eq(alerts.source, sql.placeholder('source')), isNotNull(alerts.alarmKey)))
      .orderBy(desc(alerts.id))
      .limit(1)
      .prepare();
    this.raisedLike = db.orm
      .select({ n: count() })
      .from(alerts)
      .where(and(like(alerts.source, sql.placeholder('pattern')), isNotNull(alerts.alarmKey), gte(alerts.occurredAt, sql.placeholder('since'))))
      .prepare();
    this.table = new AuditedTable(db, audit, alerts, {
      resource: 'alerts',
      notFound: 'Alert not found',
      // occurred_at DESC, id DESC walks alerts_occurred_idx (or alerts_status_idx under a status filter) backwards: no sort step.
      orderBy: [desc(alerts.occurredAt), desc(alerts.id)],
      updateAction: (before, next) => (next.status !== before.status ? statusAction(next.status) : 'update'),
      // Wallboards and dashboards poll the first page; alerts arrive far less often.
      keepPages: true,
    });
  }

  page(filters: AlertListFilters): PageResult<AlertView> {
    return this.table.page(this.conditions(filters), filters.page, filters.pageSize);
  }

  private conditions(filters: Omit<AlertListFilters, 'page' | 'pageSize'>): readonly Condition[] {
    // The unfiltered list (the page a screen polls) builds no condition arrays.
    const { status, level, area, q, from, to } = filters;
    if (status === undefined && level === undefined && area === undefined && q === undefined && from === undefined && to === undefined) return NO_CONDITIONS;
    return [
      ...oneOf(alerts.status, 'status', filters.status),
      ...oneOf(alerts.level, 'level', filters.level),
      ...equals(alerts.area, 'area', filters.area),
      ...contains([alerts.title, alerts.message, alerts.source], filters.q),
      ...timeWindow(alerts.occurredAt, filters.from, filters.to),
    ];
  }

  /** The ids a filter matches, newest first, at most `limit` (a bulk action needs no presented rows: 5,000 took ~0.5 s). */
  private matchingIds(filters: Omit<AlertListFilters, 'page' | 'pageSize'>, limit: number): number[] {
    const conditions = this.conditions(filters);
    const params = Object.assign({}, ...conditions.map((condition) => condition.params)) as Record<string, unknown>;
    const query = this.db.orm
      .select({ id: alerts.id })
      .from(alerts)
      .where(and(...conditions.map((condition) => condition.where)))
      .orderBy(desc(alerts.occurredAt), desc(alerts.id))
      .limit(limit)
      .prepare();
    return (query.all(params) as { id: number }[]).map((row) => row.id);
  }

  get(id: number): AlertView {
    return this.table.get(id);
  }

  /** Called after each new alert is committed (notifications listen here). */
  /**
   * The alert counts, one meaning each (docs/staff-app.md "What active means"): active = status active, not shelved
   * now and still in alarm (not cleared at the source), the Active tab; critical = active and critical; cleared =
   * status active, not shelved, returned to normal at the source (still to be acknowledged); shelved = status active, shelved until a time still ahead; acknowledged; resolved.
   * The five lists (active, cleared, shelved, acknowledged, resolved) part every alert: each is in exactly one.
   */
  counts(at: Date = new Date(this.now())): AlertCounts {
    return this.countsNow.get({ now: at.toISOString() })!;
  }

  /** The alerts raised after `afterId`, oldest first (at most 50): what a live stream announces. */
  raisedAfter(afterId: number): { id: number; level: AlertView['level']; title: string; area: string | null; occurredAt: string }[] {
    return this.newer.all({ after: afterId });
  }

  /** The newest alert's id, 0 without any. */
  newestId(): number {
    return this.newest.get()!.id;
  }

  onCreated(listener: (alert: AlertView) => void): void {
    this.createdListeners.push(listener);
  }

  /**
   * A new alert is always active; lifecycle fields start empty. `actor` null: raised by the service itself (a gateway
   * alarm, a report that could not be delivered).
   */
  create(input: AlertCreateInput, actor: Actor | null, origin: { alarmKey?: string; clearedAt?: string | null } = {}): AlertView {
    const created = this.table.create(
      {
        ...input,
        status: 'active',
        occurredAt: input.occurredAt && new Date(input.occurredAt).toISOString(),
        alarmKey: origin.alarmKey ?? null,
        clearedAt: origin.clearedAt ?? null,
      },
      actor,
    );
    for (const listener of this.createdListeners) listener(created);
    return created;
  }

  /**
   * One alert per gateway alarm occurrence: a key seen before is never raised again (across restarts too); a cleared
   * alarm marks its alert returned to normal and leaves its status alone — it still needs acknowledging (ISA-18.2).
   * Returns what happened, for the poller's log.
   */
  fromGatewayAlarm(alarm: GatewayAlarm): 'raised' | 'cleared' | 'unchanged' {
    // A gateway whose raisedAt moves with its clock sends a new key every poll: an occurrence still open with the same
    // code, level and text is that one (an alarm is active until it clears, so it cannot be raised twice meanwhile).
    const known = this.byAlarmKey.get({ key: alarm.key }) ?? this.openOccurrence.get({ source: alarm.code, title: alarm.message, level: alarm.level });
    if (!known) {
      this.create(
        {
          title: alarm.message,
          message: alarm.detail ?? `Gateway alarm on ${alarm.code}`,
          level: alarm.level,
          source: alarm.code,
          area: alarm.area?.() ?? null,
          occurredAt: alarm.raisedAt,
        },
        null,
        {
          alarmKey: alarm.key,
          clearedAt: alarm.clearedAt,
        },
      );
      return 'raised';
    }
    if (alarm.clearedAt && !known.clearedAt) {
      this.table.update(known.id, { clearedAt: new Date(alarm.clearedAt).toISOString() }, null);
      return 'cleared';
    }
    return 'unchanged';
  }

  /**
   * A cleared alarm whose condition came back soon after (the service's data-problem alerts): the same alert returns
   * to alarm (its cleared time emptied, audited), instead of a new one. Its status is left alone.
   */
  /** The keys of the gateway-style alerts not yet cleared whose code starts with `codePrefix` (a LIKE pattern: `energy.` → `energy.meter.4.silent@…`). */
  openAlarmKeys(codePrefix: string): string[] {
    return this.openKeysLike
      .all({ pattern: `${codePrefix}%@%` })
      .map((row) => row.alarmKey)
      .filter((key): key is string => key !== null);
  }

  /**
   * The key of the newest gateway-style alert of exactly `code` not yet cleared (keys are `code@occurrence`), or
   * undefined: energy's demand watch finds its open episode by it after a restart.
   */
  openAlarmKeyOf(code: string): string | undefined {
    return this.newestOpenLike.get({ pattern: `${code}@%` })?.alarmKey ?? undefined;
  }

  /** The newest gateway-style alert of a source (cleared or not), or undefined. */
  lastAlarmOf(source: string): { id: number; alarmKey: string; clearedAt: string | null; status: string } | undefined {
    const row = this.lastOfSource.get({ source });
    return row && row.alarmKey !== null ? { ...row, alarmKey: row.alarmKey } : undefined;
  }

  /** How many gateway-style alerts of the sources starting with `sourcePrefix` occurred at or after `since` (ISO). */
  raisedSince(sourcePrefix: string, since: string): number {
    return this.raisedLike.get({ pattern: `${sourcePrefix}%`, since })?.n ?? 0;
  }

  reopenCleared(id: number): void {
    this.table.update(id, { clearedAt: null }, null);
  }

  /** Partial update; a status in the body goes through the same lifecycle rules as acknowledge/resolve. */
  update(id: number, input: AlertUpdateInput, actor: Actor): AlertView {
    const { status, ...fields } = input;
    const patch = { ...fields, occurredAt: fields.occurredAt && new Date(fields.occurredAt).toISOString() };
    if (status === undefined) return this.table.update(id, patch, actor);
    return this.table.update(id, patch, actor, (next, before, now) => (status === before.status ? next : moved(next, status, actor, now)));
  }

  /**
   * POST /alerts/:id/acknowledge and /resolve: a repeated or backwards move is 409, never a silent overwrite of who/when.
   * A note given with the move is kept with it, in the same transaction.
   */
  transition(id: number, to: 'acknowledged' | 'resolved', actor: Actor, note?: string): AlertView {
    return this.db.sqlite.transaction(() => {
      const moved_ = this.table.update(id, {}, actor, (next, _before, now) => moved(next, to, actor, now));
      this.note(id, to === 'acknowledged' ? 'acknowledge' : 'resolve', note ?? '', actor);
      return moved_;
    })();
  }

  /** A plain comment on an alert. */
  comment(id: number, text: string, actor: Actor): AlertNoteView {
    return this.db.sqlite.transaction(() => {
      this.table.get(id);
      return this.note(id, 'comment', text, actor);
    })();
  }

  notes(id: number): AlertNoteView[] {
    this.table.get(id);
    return this.notesOf.all({ alertId: id }) as AlertNoteView[];
  }

  /** Shelved alerts leave the active counts until `shelvedUntil` passes or someone unshelves them. */
  shelve(id: number, input: { durationMin: number; reason: string }, actor: Actor): AlertView {
    return this.db.sqlite.transaction(() => {
      const until = new Date(this.now() + input.durationMin * 60_000).toISOString();
      const shelved = this.table.update(id, {}, actor, (next) => {
        if (next.status === 'resolved') throw new Conflict('The alert is resolved and cannot be shelved');
        return { ...next, shelvedUntil: until, shelvedBy: actor.id, shelveReason: input.reason };
      });
      this.note(id, 'shelve', `${input.reason} (until ${until})`, actor);
      return shelved;
    })();
  }

  unshelve(id: number, actor: Actor): AlertView {
    return this.db.sqlite.transaction(() => {
      const open = this.table.update(id, {}, actor, (next) => {
        if (!next.shelvedUntil || Date.parse(next.shelvedUntil) <= this.now()) throw new Conflict('The alert is not shelved');
        return { ...next, shelvedUntil: null, shelvedBy: null, shelveReason: null };
      });
      this.note(id, 'unshelve', '', actor);
      return open;
    })();
  }

  /**
   * Acknowledge, resolve or shelve every alert a filter matches (at most BULK_LIMIT), each audited on its own; alerts
   * the move does not apply to (already acknowledged, resolved) are counted as skipped, not refused. The changes are
   * committed in slices of at most BULK_SLICE_MS, with the event loop free between them: 5,000 alerts take seconds, and
   * requests go on being answered meanwhile (one transaction for all of them held every request for 4.3 s). Each alert's
   * move is checked inside its slice, so an alert changed by someone else meanwhile is skipped, never moved twice.
   */
  async bulk(input: AlertBulkInput, actor: Actor): Promise<{ matched: number; changed: number; skipped: number }> {
    if (input.action === 'shelve' && (input.durationMin === undefined || !input.reason)) {
      throw new BadRequest('Invalid body', [{ path: 'body', message: 'shelve needs durationMin and reason' }]);
    }
    const matching = this.matchingIds(input.filter, BULK_LIMIT + 1);
    if (matching.length > BULK_LIMIT && !input.filter.ids) {
      const { total } = this.page({ ...input.filter, page: 1, pageSize: 1 });
      throw new BadRequest(`The filter matches ${total} alerts; narrow it to at most ${BULK_LIMIT}`);
    }
    const ids = input.filter.ids ? new Set(input.filter.ids) : undefined;
    const targets = matching.slice(0, BULK_LIMIT).filter((id) => !ids || ids.has(id));
    let changed = 0;
    const moveOne = (id: number) => {
      try {
        if (input.action === 'shelve') this.shelve(id, { durationMin: input.durationMin!, reason: input.reason! }, actor);
        else this.transition(id, input.action === 'acknowledge' ? 'acknowledged' : 'resolved', actor, input.note);
        changed += 1;
      } catch (error) {
        // A Conflict is a skip; NotFound: deleted since it was matched.
        if (!(error instanceof Conflict) && !(error instanceof NotFound)) throw error;
      }
    };
    for (let next = 0; next < targets.length; ) {
      const from = next;
      // A slice that meets another process's write lock is rolled back whole and tried again.
      next = await retryWhileBusy(() => {
        const changedBefore = changed;
        try {
          return this.db.sqlite.transaction(() => {
            const sliceStart = performance.now();
            let at = from;
            while (at < targets.length && (at === from || performance.now() - sliceStart < BULK_SLICE_MS)) moveOne(targets[at++]);
            return at;
          })();
        } catch (error) {
          changed = changedBefore;
          throw error;
        }
      });
      if (next < targets.length) await new Promise((resolve) => setImmediate(resolve));
    }
    return { matched: targets.length, changed, skipped: targets.length - changed };
  }

  private note(alertId: number, kind: AlertNoteView['kind'], text: string, actor: Actor): AlertNoteView {
    const row = { alertId, kind, text, userId: actor.id, username: actor.username, at: new Date(this.now()).toISOString() };
    const { id } = this.insertNote.get(row) as { id: number };
    return { id, ...row };
  }

  delete(id: number, actor: Actor): void {
    this.table.delete(id, actor);
  }
}

function moved(alert: AlertRow, to: AlertStatus, actor: Actor, now: string): AlertRow {
  if (!NEXT[alert.status].includes(to)) throw new Conflict(`The alert is ${alert.status} and cannot become ${to}`);
  if (to === 'acknowledged') return { ...alert, status: to, acknowledgedAt: now, acknowledgedBy: actor.id };
  // Resolving straight from active leaves the acknowledgement empty: nobody acknowledged it.
  return { ...alert, status: to, resolvedAt: now, resolvedBy: actor.id };
}

function statusAction(status: AlertStatus): string {
  return status === 'acknowledged' ? 'acknowledge' : status === 'resolved' ? 'resolve' : 'update';
}
