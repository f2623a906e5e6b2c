// The database's write generation: a reading that moves whenever any row may have changed, so read results can be kept until then.
import type Database from 'better-sqlite3';

/**
 * Two counters SQLite keeps: `total_changes()` moves with every row this connection inserts, updates or deletes
 * (committed or not), `PRAGMA data_version` with every commit of any other connection — emsctl, a backup restore, a
 * second process. Either moving means a kept result may be stale. Reading both costs ~2 µs.
 */
export class WriteGeneration {
  private readonly ownChanges: Database.Statement;
  private readonly otherCommits: Database.Statement;
  private own = -1;
  private other = -1;
  private generation = 0;

  constructor(private readonly sqlite: Database.Database) {
    this.ownChanges = sqlite.prepare('SELECT total_changes()').pluck();
    this.otherCommits = sqlite.prepare('PRAGMA data_version').pluck();
  }

  /**
   * The current generation, or undefined inside a transaction: what is read there may still be rolled back, which
   * moves neither counter back, so nothing read inside one may be kept.
   */
  current(): number | undefined {
    if (this.sqlite.inTransaction) return undefined;
    const own = this.ownChanges.get() as number;
    const other = this.otherCommits.get() as number;
    if (own !== this.own || other !== this.other) {
      this.own = own;
      this.other = other;
      this.generation++;
    }
    return this.generation;
  }
}

const perConnection = new WeakMap<Database.Database, WriteGeneration>();

/** One reader per connection, shared by every table on it. */
export function writeGenerationOf(sqlite: Database.Database): WriteGeneration {
  let generation = perConnection.get(sqlite);
  if (!generation) perConnection.set(sqlite, (generation = new WriteGeneration(sqlite)));
  return generation;
}

/**
 * A computed value kept until the next write (any connection) or until its key moves (e.g. the day, the second);
 * recomputed inside a transaction, where nothing read may be kept.
 */
export class KeptUntilWrite<T> {
  private kept: { generation: number; key: string; value: T } | undefined;
  private readonly generation: WriteGeneration;

  constructor(sqlite: Database.Database) {
    this.generation = writeGenerationOf(sqlite);
  }

  get(key: string, compute: () => T): T {
    const generation = this.generation.current();
    if (generation === undefined) return compute();
    const kept = this.kept;
    if (kept && kept.generation === generation && kept.key === key) return kept.value;
    const value = compute();
    this.kept = { generation, key, value };
    return value;
  }
}
