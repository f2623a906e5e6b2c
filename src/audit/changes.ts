// Before/after of only the fields a write changed, for audit entries (the same shape the other resources record).
export function auditChanges<T extends object>(before: T, after: T): { before: Partial<T>; after: Partial<T> } | null {
  // updatedAt always moves and the entry carries its own time.
  const keys = (Object.keys(after) as (keyof T)[]).filter((key) => key !== 'updatedAt' && JSON.stringify(before[key]) !== JSON.stringify(after[key]));
  if (keys.length === 0) return null;
  return {
    before: Object.fromEntries(keys.map((key) => [key, before[key]])) as Partial<T>,
    after: Object.fromEntries(keys.map((key) => [key, after[key]])) as Partial<T>,
  };
}
