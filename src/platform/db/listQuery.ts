// Filtered, paginated reads over one drizzle table: conditions on placeholders, one prepared statement pair per filter shape.
import { and, eq, getTableColumns, getTableName, gte, inArray, lt, or, sql, type SQL } from 'drizzle-orm';
import type { SQLiteColumn, SQLiteTable } from 'drizzle-orm/sqlite-core';
import { BadRequest } from '../errors.ts';
import type { Db } from './client.ts';
import { Kept } from './kept.ts';

/**
 * One WHERE term: the SQL holds placeholders only, values travel in params. `shape` names the term's form (not its
 * values), so equal shapes share one prepared statement.
 */
export type Condition = { shape: string; where: SQL; params: Record<string, unknown> };

/**
 * A bare placeholder for a written value: drizzle encodes placeholders wrapped as column params itself (and turns a
 * NULL json value into the text "null"); a bare one passes the value as given, so callers encode where needed.
 */
export const slot = (name: string) => sql`${sql.placeholder(name)}`;

export type PageResult<T> = { items: T[]; total: number; page: number; pageSize: number };

const DAY_MS = 86_400_000;

/**
 * The [from, to] window on an ISO-8601 text column. Stored times all come from toISOString(), so normalising the
 * bounds the same way makes text comparison exact; `to` becomes an exclusive bound (a date-only `to` includes that day).
 */
export function timeWindow(column: SQLiteColumn, from: string | undefined, to: string | undefined, where: 'query' | 'body' = 'query'): Condition[] {
  const conditions: Condition[] = [];
  const start = from === undefined ? undefined : Date.parse(from);
  let end: number | undefined;
  if (to !== undefined) end = Date.parse(to) + (to.length === 10 ? DAY_MS : 1);
  if (start !== undefined && end !== undefined && start >= end) {
    throw new BadRequest('Invalid query', [{ path: `${where}.from`, message: 'must not be later than to' }]);
  }
  if (start !== undefined) conditions.push({ shape: 'from', where: gte(column, sql.placeholder('from')), params: { from: new Date(start).toISOString() } });
  if (end !== undefined) conditions.push({ shape: 'to', where: lt(column, sql.placeholder('to')), params: { to: new Date(end).toISOString() } });
  return conditions;
}

/** `column IN (...)` for a multi-valued enum filter (`?status=a&status=b`). */
export function oneOf(column: SQLiteColumn, name: string, values: readonly unknown[] | undefined): Condition[] {
  if (!values || values.length === 0) return [];
  const params: Record<string, unknown> = {};
  values.forEach((value, i) => (params[`${name}${i}`] = encoded(column, value)));
  return [
    {
      shape: `${name}:${values.length}`,
      where: inArray(
        column,
        values.map((_, i) => sql.placeholder(`${name}${i}`)),
      ),
      params,
    },
  ];
}

export function equals(column: SQLiteColumn, name: string, value: unknown): Condition[] {
  return value === undefined ? [] : [{ shape: name, where: eq(column, sql.placeholder(name)), params: { [name]: encoded(column, value) } }];
}

/** A bare placeholder compared with a column is not encoded by drizzle (a boolean would reach SQLite as is). */
function encoded(column: SQLiteColumn, value: unknown): unknown {
  return value === null ? null : column.mapToDriverValue(value);
}

/** Case-insensitive substring match over several text columns; % and _ in the search text match literally. */
export function contains(columns: SQLiteColumn[], q: string | undefined): Condition[] {
  if (q === undefined || q === '') return [];
  const pattern = `%${q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
  // drizzle's like() has no ESCAPE clause.
  const where = or(...columns.map((column) => sql`${column} LIKE ${sql.placeholder('q')} ESCAPE '\\'`));
  return where ? [{ shape: 'q', where, params: { q: pattern } }] : [];
}

/** Totals kept per filter (shape and values) until the table's next write; a bound on how many filters are remembered. */
const KEPT_TOTALS = 64;
/**
 * Pages kept until the next write (keepPages tables), and the largest page kept: bulk reads of thousands are not. A
 * page is kept from its second read among the last KEPT_PAGES pages asked for: one-off reads (someone paging through
 * the history) never enter, so they leave nothing behind for the collector to promote and sweep.
 */
const KEPT_PAGES = 16;
const KEPT_PAGE_SIZE_MAX = 100;

/**
 * Count + one page of a table, typed by the table's columns. The statements are cached by the conditions' shape:
 * their number is bounded by the filter combinations a resource offers, so the cache cannot grow without limit.
 * The count(*) of a filter is kept until the table's next write (or another connection's commit): paging through a
 * list, or polling its first page, counts once.
 */
export class PagedQuery<T extends SQLiteTable> {
  private readonly statements = new Map<string, { count: CountStatement; rows: RowsStatement }>();
  private readonly toRow: (values: unknown[]) => T['$inferSelect'];
  /** Kept caches (src/platform/db/kept.ts) on this one table: counts per filter, pages, and which pages were asked for lately. */
  private readonly totals: Kept<number>;
  private readonly pages: Kept<PageResult<T['$inferSelect']>>;
  private readonly asked: Kept<true>;

  /**
   * keepPages: a page read is also kept until the next write and handed out again as the very same object (a route
   * that reuses its validated JSON then answers a repeated read without reading or serialising anything). Only for
   * tables whose rows nobody changes after reading them.
   */
  constructor(
    private readonly db: Db,
    private readonly table: T,
    private readonly orderBy: SQL[],
    private readonly options: { keepPages?: boolean } = {},
  ) {
    this.toRow = rowReader(table);
    const tables = [getTableName(table)];
    this.totals = new Kept(db.sqlite, { name: `list.${tables[0]}.totals`, tables, max: KEPT_TOTALS });
    this.pages = new Kept(db.sqlite, { name: `list.${tables[0]}.pages`, tables, max: KEPT_PAGES });
    this.asked = new Kept(db.sqlite, { name: `list.${tables[0]}.asked`, tables, max: KEPT_PAGES });
  }

  page(conditions: readonly Condition[], page: number, pageSize: number): PageResult<T['$inferSelect']> {
    const params: Record<string, unknown> = {};
    for (const condition of conditions) Object.assign(params, condition.params);
    const filter = conditions.length === 0 ? '' : `${conditions.map((condition) => condition.shape).join(',')}\u0000${JSON.stringify(params)}`;
    const keepPage = this.options.keepPages === true && pageSize <= KEPT_PAGE_SIZE_MAX;
    const pageKey = keepPage ? `${page}:${pageSize}\u0000${filter}` : '';
    // A kept page is answered by one lookup: no statement, total or asked-for note is looked up for it.
    const kept = keepPage ? this.pages.peek(pageKey) : undefined;
    if (kept !== undefined) return kept;
    const { count, rows } = this.prepared(conditions);
    const total = this.totals.get(filter, () => count.get(params)?.total ?? 0);
    if (!keepPage) return this.read(total, rows, params, page, pageSize);
    // The first read of a page only notes it was asked for; the second (still among the last asked) keeps it.
    if (!this.asked.has(pageKey)) {
      this.asked.get(pageKey, () => true);
      return this.read(total, rows, params, page, pageSize);
    }
    return this.pages.get(pageKey, () => this.read(total, rows, params, page, pageSize));
  }

  private read(total: number, rows: RowsStatement, params: Record<string, unknown>, page: number, pageSize: number): PageResult<T['$inferSelect']> {
    const offset = (page - 1) * pageSize;
    const items = offset < total ? rows.values({ ...params, limit: pageSize, offset }).map(this.toRow) : [];
    return { items, total, page, pageSize };
  }

  private prepared(conditions: readonly Condition[]) {
    const shape = conditions.map((condition) => condition.shape).join(',');
    let statements = this.statements.get(shape);
    if (!statements) {
      const where = and(...conditions.map((condition) => condition.where));
      const orm = this.db.orm;
      const count = orm
        .select({ total: sql<number>`count(*)` })
        .from(this.table as SQLiteTable)
        .where(where)
        .prepare();
      // Read as arrays through .values(): rowReader builds the rows.
      const rows = orm
        .select()
        .from(this.table as SQLiteTable)
        .where(where)
        .orderBy(...this.orderBy)
        .limit(sql.placeholder('limit'))
        .offset(sql.placeholder('offset'))
        .prepare();
      this.statements.set(shape, (statements = { count, rows }));
    }
    return statements;
  }
}

type CountStatement = { get(params: Record<string, unknown>): { total: number } | undefined };
type RowsStatement = { values(params: Record<string, unknown>): unknown[][] };

/** Column types whose driver value is already the row value: no decoder call for them. */
export const AS_STORED = new Set(['SQLiteText', 'SQLiteInteger', 'SQLiteReal', 'SQLiteNumeric']);

/**
 * Array → row for `select()` of a whole table (columns in declaration order). drizzle's own mapper checks each
 * field's kind and walks its path on every value (~2.5 µs a row of 14 columns); this one decides that once per
 * table and decodes only json/boolean/timestamp columns.
 */
export function rowReader<T extends SQLiteTable>(table: T): (values: unknown[]) => T['$inferSelect'] {
  const columns = Object.entries(getTableColumns(table)).map(([key, column]) => ({ key, decoder: AS_STORED.has(column.columnType) ? null : column }));
  return (values) => {
    const row: Record<string, unknown> = {};
    for (let i = 0; i < columns.length; i++) {
      const { key, decoder } = columns[i];
      const value = values[i];
      row[key] = decoder === null || value === null ? value : decoder.mapFromDriverValue(value);
    }
    return row as T['$inferSelect'];
  };
}
