// One audited resource table: typed page/get/create/update/delete, each write and its audit row in one transaction.
import { eq, getTableColumns, sql, type SQL } from 'drizzle-orm';
import type { SQLiteColumn, SQLiteTable } from 'drizzle-orm/sqlite-core';
import { BadRequest, NotFound } from '../errors.ts';
import { auditChanges, type Actor, type AuditLog } from './auditTrail.ts';
import type { Db } from './client.ts';
import { nowIso } from './schema/columns.ts';
import { AS_STORED, PagedQuery, rowReader, slot, type Condition, type PageResult } from './listQuery.ts';

/** A table whose rows are addressed by an integer `id`. */
export type IdTable = SQLiteTable & { id: SQLiteColumn };
export type RowOf<T extends IdTable> = T['$inferSelect'] & { id: number };
/** What a create supplies: every column but the id; a column with a default may be left out. */
export type NewRowOf<T extends IdTable> = Omit<T['$inferInsert'], 'id'>;

/** What is the resource's own; everything else (merge, no-op detection, audit, RETURNING) is the table's. */
export type TableRules<T extends IdTable, View> = {
  /** The audit trail's name for the resource, e.g. `alerts`. */
  resource: string;
  /** The NotFound message, e.g. `Alert not found`. */
  notFound: string;
  /** The list order; ends with a unique column so pages never overlap. */
  orderBy: SQL[];
  /** The API shape of a row; the row itself when absent. Audit entries record this shape too. */
  present?: (row: RowOf<T>) => View;
  /** Stamps what follows from the row itself on create and update (e.g. resolvedAt on a move into resolved). */
  lifecycle?: (next: Omit<RowOf<T>, 'id'>, before: RowOf<T> | undefined, now: string) => Omit<RowOf<T>, 'id'>;
  /** Checks the complete row about to be written (before is undefined on create); throws a typed error to refuse. */
  check?: (next: Omit<RowOf<T>, 'id'>, before: RowOf<T> | undefined) => void;
  /** The audit action of an update; `update` when absent. */
  updateAction?: (before: RowOf<T>, next: RowOf<T>) => string;
  /** Runs inside every write's transaction, after the write: rows derived from this table (e.g. fault stats). */
  afterWrite?: (before: RowOf<T> | null, after: RowOf<T> | null, now: string) => void;
  /**
   * Pages are kept until the next write and handed out again as the same objects (see PagedQuery): for a list that
   * is read far more often than written, whose rows the API shows whole and no reader changes.
   */
  keepPages?: true;
};

/** Partial update that runs after the merge of the body: a resource's lifecycle rules (who and when of a status move). */
export type Change<T extends IdTable> = (next: RowOf<T>, before: RowOf<T>, now: string) => RowOf<T>;

type Params = Record<string, unknown>;
/** Statements are read as arrays (drizzle's `.values()`) and turned into rows by the table's reader. */
type Prepared = { values(params: Params): unknown[][] };
/** How a column left out of a create gets its value, decided once per table. */
type ColumnDefault = { key: string; now: boolean; fn?: () => unknown; value: unknown };

export class AuditedTable<T extends IdTable, View = RowOf<T>> {
  private readonly columns: [string, SQLiteColumn][];
  private readonly defaults: ColumnDefault[];
  private readonly encoders: { key: string; encoder: SQLiteColumn | null }[];
  private readonly toRow: (values: unknown[]) => RowOf<T>;
  private readonly list: PagedQuery<T>;
  private readonly byId: Prepared;
  private readonly insert: Prepared;
  private readonly save: Prepared;
  private readonly remove: Prepared;
  private readonly present: (row: RowOf<T>) => View;
  /** The presented form of each kept page, so a kept page stays one object after presenting too. */
  private readonly presentedPages = new WeakMap<PageResult<unknown>, PageResult<View>>();

  constructor(
    private readonly db: Db,
    private readonly audit: AuditLog,
    readonly table: T,
    private readonly rules: TableRules<T, View>,
  ) {
    this.columns = Object.entries(getTableColumns(table)).filter(([key]) => key !== 'id');
    this.defaults = this.columns.map(([key, column]) => ({ key, now: column.defaultFn === nowIso, fn: column.defaultFn, value: column.default ?? null }));
    // Only json/boolean columns need drizzle's encoder; text and numbers bind as they are.
    this.encoders = this.columns.map(([key, column]) => ({ key, encoder: AS_STORED.has(column.columnType) ? null : column }));
    this.toRow = rowReader(table) as (values: unknown[]) => RowOf<T>;
    const slots = Object.fromEntries(this.columns.map(([key]) => [key, slot(key)]));
    const byId = eq(table.id, sql.placeholder('id'));
    // Generic over the table, drizzle's builders lose the row type; rows are typed back by the reader.
    const orm = db.orm;
    const any = table as SQLiteTable;
    this.list = new PagedQuery(db, table, rules.orderBy, { keepPages: rules.keepPages === true });
    this.byId = orm.select().from(any).where(byId).prepare();
    this.insert = orm.insert(any).values(slots).returning().prepare();
    this.save = orm.update(any).set(slots).where(byId).returning().prepare();
    this.remove = orm.delete(any).where(byId).returning().prepare();
    this.present = rules.present ?? ((row) => row as View);
  }

  page(conditions: readonly Condition[], page: number, pageSize: number): PageResult<View> {
    const result = this.list.page(conditions, page, pageSize);
    if (!this.rules.present) return result as PageResult<View>;
    let presented = this.presentedPages.get(result);
    if (!presented) {
      presented = { ...result, items: (result.items as RowOf<T>[]).map(this.present) };
      if (this.rules.keepPages) this.presentedPages.set(result, presented);
    }
    return presented;
  }

  get(id: number): View {
    return this.present(this.row(id));
  }

  /** The stored row (not presented), for a service's own rules. */
  row(id: number): RowOf<T> {
    const row = this.first(this.byId, { id });
    if (!row) throw new NotFound(this.rules.notFound);
    return row;
  }

  create(values: NewRowOf<T>, actor: Actor | null): View {
    return this.transaction(() => {
      const now = new Date().toISOString();
      let row = this.completed(values as Params, now) as Omit<RowOf<T>, 'id'>;
      if (this.rules.lifecycle) row = this.rules.lifecycle(row, undefined, now);
      this.rules.check?.(row, undefined);
      // Read back: a trigger may have set columns of its own in the same statement (the fleet sync sequence), which
      // RETURNING does not show. One point read (~5 µs) so the answer, the audit and get() see the same row.
      const inserted = this.row(this.first(this.insert, this.encoded(row))!.id);
      const created = this.present(inserted);
      this.audit.record({ actor, action: 'create', resource: this.rules.resource, resourceId: inserted.id, after: created });
      this.rules.afterWrite?.(null, inserted, now);
      return created;
    });
  }

  /**
   * Partial update: fields left undefined keep their value, then `change` applies the resource's lifecycle. Sending
   * the current values back is answered with the row as it is, without a write or an audit entry.
   */
  update(id: number, patch: Partial<NewRowOf<T>>, actor: Actor | null, change?: Change<T>): View {
    const defined = Object.entries(patch).filter(([, value]) => value !== undefined);
    // Unknown fields are dropped by the body schema: a body of nothing but unknown fields arrives here empty.
    if (!change && defined.length === 0) throw new BadRequest('Invalid body', [{ path: 'body', message: 'must contain at least one writable field' }]);
    return this.transaction(() => {
      const before = this.row(id);
      const now = new Date().toISOString();
      let next = { ...before, ...Object.fromEntries(defined) } as RowOf<T>;
      if (change) next = change(next, before, now);
      if (this.rules.lifecycle) next = { ...this.rules.lifecycle(next, before, now), id };
      this.rules.check?.(next, before);
      const shownBefore = this.present(before);
      const changes = auditChanges(shownBefore as object, this.present(next) as object);
      if (!changes) return shownBefore;
      this.first(this.save, { ...this.encoded({ ...next, updatedAt: now }), id });
      const saved = this.row(id);
      const action = this.rules.updateAction?.(before, next) ?? 'update';
      this.audit.record({ actor, action, resource: this.rules.resource, resourceId: id, ...changes });
      this.rules.afterWrite?.(before, saved, now);
      return this.present(saved);
    });
  }

  delete(id: number, actor: Actor | null): View {
    return this.transaction(() => {
      const removed = this.first(this.remove, { id });
      if (!removed) throw new NotFound(this.rules.notFound);
      const before = this.present(removed);
      this.audit.record({ actor, action: 'delete', resource: this.rules.resource, resourceId: id, before });
      this.rules.afterWrite?.(removed, null, new Date().toISOString());
      return before;
    });
  }

  /** Runs fn in one SQLite transaction (nested calls become savepoints): a service's multi-step write. */
  transaction<R>(fn: () => R): R {
    return this.db.sqlite.transaction(fn)();
  }

  /** Every column of a new row: the given value, else the column's default, else NULL; "now" defaults are the write's `now`. */
  private completed(values: Params, now: string): Params {
    const row: Params = {};
    for (let i = 0; i < this.defaults.length; i++) {
      const column = this.defaults[i];
      const given = values[column.key];
      row[column.key] = given !== undefined ? given : column.now ? now : column.fn ? column.fn() : column.value;
    }
    return row;
  }

  private first(statement: Prepared, params: Params): RowOf<T> | undefined {
    const values = statement.values(params)[0];
    return values && this.toRow(values);
  }

  private encoded(row: Params): Params {
    const params: Params = {};
    for (const { key, encoder } of this.encoders) {
      const value = row[key];
      params[key] = value === null || value === undefined ? null : encoder === null ? value : encoder.mapToDriverValue(value);
    }
    return params;
  }
}
