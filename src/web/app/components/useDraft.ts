// A form's unsaved input kept for the tab (sessionStorage) as it is typed: it survives a session that ended (signed
// in elsewhere, expired), a reload and an outage, and is offered back when the form opens again. Saved or discarded,
// it goes; signing out on purpose clears every draft (state/session.ts), so the next person at the desk sees none.
import { useLayoutEffect, useState } from 'preact/hooks';

const PREFIX = 'ems.draft.';

function read<T>(key: string): T | null {
  try {
    const text = sessionStorage.getItem(PREFIX + key);
    return text === null ? null : (JSON.parse(text) as T);
  } catch {
    return null;
  }
}

/** Whether a draft is kept under `key` (e.g. to open its form at once). */
export function hasDraft(key: string): boolean {
  return sessionStorage.getItem(PREFIX + key) !== null;
}

/** Every kept draft of the tab: a deliberate sign-out. */
export function clearDrafts(): void {
  for (const key of Object.keys(sessionStorage)) if (key.startsWith(PREFIX)) sessionStorage.removeItem(key);
}

export function useDraft<T extends Record<string, string>>(
  key: string,
  initial: T,
): { values: T; set: (patch: Partial<T>) => void; restored: boolean; discard: () => void; saved: () => void } {
  const [kept] = useState(() => read<T>(key));
  const [values, setValues] = useState<T>(() => ({ ...initial, ...(kept ?? {}) }));
  const [restored, setRestored] = useState(kept !== null);
  // A layout effect runs in the same task as the render that follows a keystroke; a plain effect waits for the next
  // frame, and a click that leaves the screen before it comes lost the last field typed (CI saw the fault form's
  // description gone).
  useLayoutEffect(() => {
    // Only what differs from the empty form is worth keeping.
    const changed = (Object.keys(values) as (keyof T)[]).some((name) => values[name] !== initial[name]);
    if (changed) sessionStorage.setItem(PREFIX + key, JSON.stringify(values));
    else sessionStorage.removeItem(PREFIX + key);
  }, [values]);
  return {
    values,
    set: (patch) => setValues((current) => ({ ...current, ...patch })),
    restored,
    discard: () => {
      sessionStorage.removeItem(PREFIX + key);
      setValues(initial);
      setRestored(false);
    },
    saved: () => {
      sessionStorage.removeItem(PREFIX + key);
      setRestored(false);
    },
  };
}
