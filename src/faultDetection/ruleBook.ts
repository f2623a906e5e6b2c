// The rule book: every version of every rule (a change adds a version, so past episodes keep the one that found them),
// the shipped library written in at start, and each rule's switch (on, off, paused by the flood guard).
import { and, eq, sql } from 'drizzle-orm';
import type { Db } from '../platform/db/client.ts';
import { slot } from '../platform/db/listQuery.ts';
import { fddRules, fddRuleSwitches } from '../platform/db/schema/index.ts';
import { BadRequest, NotFound } from '../platform/errors.ts';
import { RULE_LIBRARY } from './library.ts';
import { checkRule } from './rules.ts';
import type { RuleDefinitionView } from './schemas.ts';

export type RuleSwitch = { enabled: boolean; paused: { at: string; reason: string } | null };

export class RuleBook {
  private readonly versions;
  private readonly insertVersion;
  private readonly oneVersion;
  private readonly switches;
  private readonly upsertSwitch;
  /** Bumped on every write: the evaluator rebuilds its runners when it changes. */
  revision = 0;

  constructor(private readonly db: Db) {
    this.versions = db.orm
      .select({ id: fddRules.id, version: fddRules.version, definition: fddRules.definition })
      .from(fddRules)
      .orderBy(fddRules.id, fddRules.version)
      .prepare();
    this.insertVersion = db.orm
      .insert(fddRules)
      .values({ id: slot('id'), version: slot('version'), definition: slot('definition'), createdAt: slot('at') })
      .onConflictDoNothing()
      .prepare();
    this.oneVersion = db.orm
      .select({ definition: fddRules.definition })
      .from(fddRules)
      .where(and(eq(fddRules.id, sql.placeholder('id')), eq(fddRules.version, sql.placeholder('version'))))
      .prepare();
    this.switches = db.orm.select().from(fddRuleSwitches).prepare();
    const set = { enabled: slot('enabled'), pausedAt: slot('pausedAt'), pausedReason: slot('pausedReason'), updatedAt: slot('at') };
    this.upsertSwitch = db.orm
      .insert(fddRuleSwitches)
      .values({ ruleId: slot('id'), ...set })
      .onConflictDoUpdate({ target: fddRuleSwitches.ruleId, set })
      .prepare();
  }

  /** Writes the shipped rules' versions not yet stored (a newer library version is a new version; older ones stay). */
  ensureLibrary(): void {
    const at = new Date().toISOString();
    this.db.sqlite.transaction(() => {
      for (const rule of RULE_LIBRARY) this.insertVersion.run({ id: rule.id, version: rule.version, definition: JSON.stringify(rule), at });
    })();
    this.revision++;
  }

  /** The newest version of each rule. */
  current(): Map<string, RuleDefinitionView> {
    const newest = new Map<string, RuleDefinitionView>();
    for (const row of this.versions.all()) newest.set(row.id, row.definition as RuleDefinitionView);
    return newest;
  }

  get(id: string): RuleDefinitionView {
    const rule = this.current().get(id);
    if (!rule) throw new NotFound(`no rule ${id}`);
    return rule;
  }

  version(id: string, version: number): RuleDefinitionView | undefined {
    return this.oneVersion.get({ id, version })?.definition as RuleDefinitionView | undefined;
  }

  /**
   * Saves a rule as its next version (refused, naming the field, when malformed). A rule new to the book starts
   * switched off: it is tried on history before it is trusted.
   */
  save(id: string, definition: unknown): RuleDefinitionView {
    const errors = checkRule(definition);
    if (errors.length) throw new BadRequest(`rule ${id} is malformed: ${errors[0]!.path} ${errors[0]!.message}`, errors);
    const rule = definition as RuleDefinitionView;
    if (rule.id !== id) throw new BadRequest('the rule id must match the path', [{ path: 'body.id', message: `must be ${id}` }]);
    const known = this.current().get(id);
    const saved = { ...rule, version: (known?.version ?? 0) + 1 };
    const at = new Date().toISOString();
    this.db.sqlite.transaction(() => {
      this.insertVersion.run({ id, version: saved.version, definition: JSON.stringify(saved), at });
      if (!known) this.upsertSwitch.run({ id, enabled: 0, pausedAt: null, pausedReason: null, at });
    })();
    this.revision++;
    return saved;
  }

  /** Each rule's switch; a rule with no row is on (the shipped library). */
  switchOf(): Map<string, RuleSwitch> {
    const out = new Map<string, RuleSwitch>();
    for (const row of this.switches.all())
      out.set(row.ruleId, { enabled: row.enabled, paused: row.pausedAt ? { at: row.pausedAt, reason: row.pausedReason ?? '' } : null });
    return out;
  }

  /** Switches a rule on or off; switching on also lifts a pause. */
  setEnabled(id: string, enabled: boolean): RuleSwitch {
    this.get(id);
    this.upsertSwitch.run({ id, enabled: enabled ? 1 : 0, pausedAt: null, pausedReason: null, at: new Date().toISOString() });
    this.revision++;
    return { enabled, paused: null };
  }

  pause(id: string, reason: string, at: string): void {
    this.upsertSwitch.run({ id, enabled: 1, pausedAt: at, pausedReason: reason, at });
    this.revision++;
  }
}
