// Tells people about alerts by email: rules by level and area, escalation of unacknowledged critical alerts, one
// summary instead of a flood, and a record of every send (delivered or failed, with the reason) kept on the alert.
import { and, asc, desc, eq, gte, isNull, lte, notExists, or, sql } from 'drizzle-orm';
import type { AlertView } from '../alerts/schemas.ts';
import type { Db } from '../../platform/db/client.ts';
import { slot } from '../../platform/db/listQuery.ts';
import { alerts, notificationRules, notificationSends } from '../../platform/db/schema/index.ts';
import type { Logger } from '../../platform/logger.ts';
import type { Mailer } from '../../platform/mail/mailer.ts';
import type { SiteMail } from '../../platform/mail/siteMail.ts';
import type { Job } from '../../platform/jobs/jobs.ts';
import { Repeating } from '../../platform/jobs/lifecycle.ts';

type Rule = typeof notificationRules.$inferSelect;
export type NotificationSendView = typeof notificationSends.$inferSelect;

export type NotifierOptions = {
  db: Db;
  mailer: Mailer;
  logger: Logger;
  publicUrl: string;
  /** Site name, language and link base of the mails; read from the platform config with publicUrl as the base unless given. */
  /** Where each mail's site name, language and zone come from (siteMailReader over the site's settings). */
  siteMail: () => SiteMail;
  now?: () => number;
  /** More new-alert mails than this to one recipient within `floodWindowMs` turns into summaries. */
  floodLimit?: number;
  floodWindowMs?: number;
  /** How long a summary gathers before its first send (later ones go at most once per window). */
  summaryDelayMs?: number;
  /** How often unacknowledged critical alerts are checked against their escalation deadline. */
  escalationCheckMs?: number;
  /** Alerts that started longer ago than this when they reached us (history read after an outage) are not mailed. */
  staleAfterMs?: number;
};

/** Up to this many alerts escalating under one rule in one check get a mail each; more get one list per recipient. */
export const ESCALATION_SINGLE_MAILS = 10;
/** Alerts one rule escalates per check (every 10 s): a backlog of thousands goes out in lists of this size. */
export const ESCALATION_BATCH = 2000;

type EscalatingAlert = { id: number; title: string; source: string | null; area: string | null; occurredAt: string };

type PendingSummary = { alertIds: number[]; timer: NodeJS.Timeout | undefined };

export class AlarmNotifier {
  private readonly now: () => number;
  private readonly floodLimit: number;
  private readonly floodWindowMs: number;
  private readonly summaryDelayMs: number;
  private readonly staleAfterMs: number;
  private readonly recentSends;
  private readonly lastSummary;
  private readonly record;
  private readonly sendsOf;
  private readonly escalationDue;
  private readonly summaryRows;
  private readonly enabledRules;
  private readonly pending = new Map<string, PendingSummary>();
  /** Mails to each recipient decided in this process but maybe not yet recorded (sends are async). */
  private readonly inFlight = new Map<string, number>();
  private escalations: Repeating | undefined;
  private escalating = false;
  private readonly work = new Set<Promise<unknown>>();

  private readonly siteMail: () => SiteMail;

  constructor(private readonly options: NotifierOptions) {
    const { db } = options;
    this.siteMail = options.siteMail;
    this.now = options.now ?? Date.now;
    this.floodLimit = options.floodLimit ?? 10;
    this.floodWindowMs = options.floodWindowMs ?? 10 * 60_000;
    this.summaryDelayMs = options.summaryDelayMs ?? 60_000;
    this.staleAfterMs = options.staleAfterMs ?? 60 * 60_000;
    this.enabledRules = db.orm.select().from(notificationRules).where(eq(notificationRules.enabled, true)).prepare();
    this.recentSends = db.orm
      .select({ n: sql<number>`count(*)` })
      .from(notificationSends)
      .where(
        and(
          eq(notificationSends.recipient, sql.placeholder('recipient')),
          eq(notificationSends.kind, 'alert'),
          gte(notificationSends.at, sql.placeholder('since')),
        ),
      )
      .prepare();
    this.lastSummary = db.orm
      .select({ at: notificationSends.at })
      .from(notificationSends)
      .where(and(eq(notificationSends.recipient, sql.placeholder('recipient')), eq(notificationSends.kind, 'summary')))
      .orderBy(desc(notificationSends.at))
      .limit(1)
      .prepare();
    this.record = db.orm
      .insert(notificationSends)
      .values({
        alertId: slot('alertId'),
        ruleId: slot('ruleId'),
        kind: slot('kind'),
        recipient: slot('recipient'),
        status: slot('status'),
        error: slot('error'),
        alertIds: slot('alertIds'),
        at: slot('at'),
      })
      .prepare();
    this.sendsOf = db.orm
      .select()
      .from(notificationSends)
      .where(eq(notificationSends.alertId, sql.placeholder('alertId')))
      .orderBy(notificationSends.id)
      .prepare();
    // Critical, still active (unacknowledged), not shelved, covered by this rule (its area; arrived while the rule
    // existed and fresh enough to be told, as alertRaised decides), not yet escalated under it. Covered, not "mailed
    // under the rule": an alert folded into a flood summary has no mail of its own and must escalate too.
    const area = sql.placeholder('area');
    this.escalationDue = db.orm
      .select({ id: alerts.id, title: alerts.title, source: alerts.source, area: alerts.area, occurredAt: alerts.occurredAt })
      .from(alerts)
      .where(
        and(
          eq(alerts.level, 'critical'),
          eq(alerts.status, 'active'),
          or(isNull(alerts.shelvedUntil), lte(alerts.shelvedUntil, sql.placeholder('now'))),
          lte(alerts.occurredAt, sql.placeholder('deadline')),
          sql`(${area} IS NULL OR ${alerts.area} = ${area})`,
          gte(alerts.createdAt, sql.placeholder('ruleCreatedAt')),
          sql`(julianday(${alerts.createdAt}) - julianday(${alerts.occurredAt})) * 86400000.0 <= ${sql.placeholder('staleAfterMs')}`,
          notExists(
            db.orm
              .select({ one: sql`1` })
              .from(notificationSends)
              .where(
                and(
                  eq(notificationSends.alertId, alerts.id),
                  eq(notificationSends.ruleId, sql.placeholder('ruleId')),
                  eq(notificationSends.kind, 'escalation'),
                ),
              ),
          ),
        ),
      )
      .orderBy(asc(alerts.occurredAt), asc(alerts.id))
      .limit(sql.placeholder('limit'))
      .prepare();
    // The ids of one summary, as JSON text: a flood's list needs no statement per length, nor a bound variable per id.
    this.summaryRows = db.orm
      .select({ id: alerts.id, title: alerts.title, level: alerts.level, occurredAt: alerts.occurredAt })
      .from(alerts)
      .where(sql`${alerts.id} IN (SELECT value FROM json_each(${sql.placeholder('ids')}))`)
      .orderBy(asc(alerts.occurredAt))
      .prepare();
  }

  /** The escalation check as a named job, once started. */
  get escalationJob(): Job | undefined {
    return this.escalations;
  }

  start(): void {
    const every = this.options.escalationCheckMs ?? 10_000;
    this.escalations = new Repeating(
      () =>
        this.checkEscalations().catch((error: unknown) => this.options.logger.error({ err: error }, 'escalation check failed; tried again at the next run')),
      every,
      'alert escalations',
    );
    this.escalations.start();
  }

  /** Stops the timers; pending summaries go out now, so nothing decided is lost on a clean stop. */
  async stop(): Promise<void> {
    await this.escalations?.stop();
    for (const recipient of [...this.pending.keys()]) this.track(this.flushSummary(recipient));
    await this.idle();
  }

  /** Resolves when every send started so far has been recorded (tests, shutdown). */
  async idle(): Promise<void> {
    while (this.work.size > 0) await Promise.allSettled([...this.work]);
  }

  sends(alertId: number): NotificationSendView[] {
    return this.sendsOf.all({ alertId }) as NotificationSendView[];
  }

  /** A new alert: every enabled rule that matches its level and area tells its recipients (or queues a summary). */
  alertRaised(alert: AlertView): void {
    if (this.now() - Date.parse(alert.occurredAt) > this.staleAfterMs) {
      this.options.logger.info({ alertId: alert.id, occurredAt: alert.occurredAt }, 'alert from the past recorded without mail');
      return;
    }
    for (const rule of this.rulesFor(alert)) {
      for (const recipient of rule.recipients) {
        const since = new Date(this.now() - this.floodWindowMs).toISOString();
        const sent = (this.recentSends.get({ recipient, since }) as { n: number }).n + (this.inFlight.get(recipient) ?? 0);
        if (sent < this.floodLimit && !this.pending.has(recipient)) {
          this.inFlight.set(recipient, (this.inFlight.get(recipient) ?? 0) + 1);
          this.track(
            this.send('alert', recipient, alertMail(alert, this.siteMail()), { alertId: alert.id, ruleId: rule.id }).finally(() => {
              const left = (this.inFlight.get(recipient) ?? 1) - 1;
              if (left <= 0) this.inFlight.delete(recipient);
              else this.inFlight.set(recipient, left);
            }),
          );
        } else {
          this.queueSummary(recipient, alert.id);
        }
      }
    }
  }

  /**
   * Sends the escalation for every critical alert past its rule's deadline; returns how many alerts escalated. Up to
   * ESCALATION_SINGLE_MAILS due at once under a rule get a mail each; more get one list per recipient (a flood of
   * 5,000 is 1 mail, not 5,000), each alert still recorded as escalated. At most ESCALATION_BATCH per rule per check.
   */
  async checkEscalations(): Promise<number> {
    // The timer fires every 10 s; a check still sending (slow SMTP) must not be overlapped by the next, which would
    // escalate the same alerts twice.
    if (this.escalating) return 0;
    this.escalating = true;
    try {
      let count = 0;
      const now = this.now();
      for (const rule of this.enabledRules.all()) {
        if (!rule.escalateAfterMin || rule.escalateTo.length === 0 || !rule.levels.includes('critical')) continue;
        const deadline = new Date(now - rule.escalateAfterMin * 60_000).toISOString();
        const due = this.escalationDue.all({
          now: new Date(now).toISOString(),
          deadline,
          area: rule.area,
          ruleCreatedAt: rule.createdAt,
          staleAfterMs: this.staleAfterMs,
          ruleId: rule.id,
          limit: ESCALATION_BATCH,
        });
        if (due.length === 0) continue;
        if (due.length <= ESCALATION_SINGLE_MAILS) {
          for (const alert of due) {
            await Promise.all(
              rule.escalateTo.map((recipient) =>
                this.send('escalation', recipient, escalationMail(alert, rule.escalateAfterMin!, this.siteMail()), { alertId: alert.id, ruleId: rule.id }),
              ),
            );
          }
        } else {
          const ids = due.map((alert) => alert.id);
          const mail = escalationListMail(due, rule.escalateAfterMin, this.siteMail());
          await Promise.all(rule.escalateTo.map((recipient) => this.send('escalation', recipient, mail, { alertId: null, ruleId: rule.id, alertIds: ids })));
        }
        count += due.length;
      }
      return count;
    } finally {
      this.escalating = false;
    }
  }

  private rulesFor(alert: AlertView): Rule[] {
    return this.enabledRules.all().filter((rule) => rule.levels.includes(alert.level) && (!rule.area || rule.area === alert.area));
  }

  /** At most one summary per recipient per flood window; the first one gathers for summaryDelayMs. */
  private queueSummary(recipient: string, alertId: number): void {
    let summary = this.pending.get(recipient);
    if (!summary) {
      const last = this.lastSummary.get({ recipient }) as { at: string } | undefined;
      const earliest = last ? Date.parse(last.at) + this.floodWindowMs : this.now() + this.summaryDelayMs;
      summary = { alertIds: [], timer: undefined };
      this.pending.set(recipient, summary);
      summary.timer = setTimeout(() => this.track(this.flushSummary(recipient)), Math.max(this.summaryDelayMs, earliest - this.now()));
      summary.timer.unref();
    }
    summary.alertIds.push(alertId);
  }

  private async flushSummary(recipient: string): Promise<void> {
    const summary = this.pending.get(recipient);
    if (!summary) return;
    clearTimeout(summary.timer);
    this.pending.delete(recipient);
    const rows = this.summaryRows.all({ ids: JSON.stringify(summary.alertIds) });
    await this.send('summary', recipient, summaryMail(rows, this.siteMail()), { alertId: null, ruleId: null, alertIds: summary.alertIds });
  }

  private async send(
    kind: NotificationSendView['kind'],
    recipient: string,
    mail: { subject: string; text: string },
    about: { alertId: number | null; ruleId: number | null; alertIds?: number[] },
  ): Promise<void> {
    let status: 'delivered' | 'failed' = 'delivered';
    let error: string | null = null;
    try {
      await this.options.mailer.send({ to: recipient, subject: mail.subject, text: mail.text });
    } catch (failure) {
      status = 'failed';
      error = (failure as Error).message.slice(0, 500);
      this.options.logger.warn({ recipient, kind, alertId: about.alertId, err: { message: error } }, 'an alert notification could not be sent');
    }
    try {
      const at = new Date(this.now()).toISOString();
      if (kind === 'escalation' && about.alertId === null && about.alertIds) {
        // An escalation list is recorded on each alert it names, so each shows it escalated (and escalates once).
        const ids = about.alertIds;
        this.options.db.sqlite.transaction(() => {
          for (const alertId of ids) this.record.run({ alertId, ruleId: about.ruleId, alertIds: '[]', kind, recipient, status, error, at });
        })();
      } else {
        this.record.run({ ...about, alertIds: JSON.stringify(about.alertIds ?? []), kind, recipient, status, error, at });
      }
    } catch (failure) {
      // The alert was deleted meanwhile: nothing to attach the record to.
      this.options.logger.warn({ alertId: about.alertId, err: { message: (failure as Error).message } }, 'notification not recorded');
    }
  }

  private track(promise: Promise<unknown>): void {
    this.work.add(promise);
    void promise.finally(() => this.work.delete(promise));
  }
}

const link = (mail: SiteMail, id: number) => `${mail.baseUrl}/api/alerts/${id}`;

// The mail texts are the site's language (src/platform/i18n); level names stay the API's words in subjects so filters keep working.
function alertMail(alert: AlertView, mail: SiteMail) {
  const { t, format } = mail;
  return {
    subject: t('mail.alert.subject', { site: mail.site, level: alert.level, title: alert.title }),
    text: [
      `${alert.title}`,
      '',
      `${t('mail.alert.level')}: ${t(`value.${alert.level}`)}`,
      `${t('mail.alert.source')}: ${alert.source ?? '-'}`,
      `${t('mail.alert.area')}: ${alert.area ?? '-'}`,
      `${t('mail.alert.since')}: ${format.dateTime(alert.occurredAt)} (${format.timezone})`,
      alert.message ? `\n${alert.message}` : '',
      '',
      t('mail.alert.open', { id: alert.id, url: link(mail, alert.id) }),
      '',
      `${mail.footer}`,
    ].join('\n'),
  };
}

function escalationListMail(alerts: EscalatingAlert[], minutes: number, mail: SiteMail) {
  const lines = alerts.slice(0, 50).map((alert) => `${alert.occurredAt}  ${alert.title}  (area ${alert.area ?? '-'}, ${link(mail, alert.id)})`);
  return {
    subject: `[EMS escalation] ${mail.site}: ${alerts.length} critical alerts not acknowledged after ${minutes} min`,
    text: [
      `${alerts.length} critical alerts have not been acknowledged within ${minutes} minutes.`,
      '',
      ...lines,
      alerts.length > 50 ? `… and ${alerts.length - 50} more.` : '',
      '',
      mail.footer,
    ].join('\n'),
  };
}

function escalationMail(alert: EscalatingAlert, minutes: number, mail: SiteMail) {
  const { t, format } = mail;
  return {
    subject: t('mail.escalation.subject', { site: mail.site, title: alert.title, minutes }),
    text: [
      t('mail.escalation.body', {
        title: alert.title,
        since: `${format.dateTime(alert.occurredAt)} (${format.timezone})`,
        source: alert.source ?? '-',
        area: alert.area ?? '-',
        minutes,
      }),
      '',
      t('mail.alert.open', { id: alert.id, url: link(mail, alert.id) }),
      '',
      `${mail.footer}`,
    ].join('\n'),
  };
}

function summaryMail(rows: { id: number; title: string; level: string; occurredAt: string }[], mail: SiteMail) {
  const { t, format } = mail;
  const byLevel = (level: string) => rows.filter((row) => row.level === level).length;
  const lines = rows.slice(0, 50).map((row) => `${format.dateTime(row.occurredAt)}  ${row.level.padEnd(8)} ${row.title}  (${link(mail, row.id)})`);
  return {
    subject: t('mail.summary.subject', {
      site: mail.site,
      count: rows.length,
      critical: byLevel('critical'),
      warning: byLevel('warning'),
      info: byLevel('info'),
    }),
    text: [
      t('mail.summary.intro', { count: rows.length }),
      '',
      ...lines,
      rows.length > 50 ? t('mail.summary.more', { count: rows.length - 50 }) : '',
      '',
      `${mail.footer}`,
    ].join('\n'),
  };
}
