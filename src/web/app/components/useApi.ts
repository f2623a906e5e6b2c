// Loads a screen's data once (and again on `reload()`), with its error text. A call the box never answered is said
// in words (api/client.ts) and tried again by itself, 2 s and then up to 30 s apart, keeping what was shown.
import { useCallback, useEffect, useState } from 'preact/hooks';
import { errorText, UNREACHABLE } from '../api/client';

type Answer<T> = { data?: T; error?: unknown; response: Response };

const isUnreachable = (error: unknown) => typeof error === 'object' && error !== null && (error as { code?: unknown }).code === UNREACHABLE;

export function useApi<T>(load: () => Promise<Answer<T>>, deps: unknown[] = []): { data: T | undefined; problem: string | null; reload: () => void } {
  const [data, setData] = useState<T | undefined>(undefined);
  const [problem, setProblem] = useState<string | null>(null);
  const [tick, setTick] = useState(0);
  const [misses, setMisses] = useState(0);
  useEffect(() => {
    let live = true;
    let retry: ReturnType<typeof setTimeout> | undefined;
    load().then(
      (answer) => {
        if (!live) return;
        if (answer.data !== undefined) {
          setData(answer.data);
          setProblem(null);
          setMisses(0);
        } else {
          setProblem(errorText(answer.error, answer.response.status));
          if (isUnreachable(answer.error)) {
            retry = setTimeout(
              () => {
                setMisses((n) => n + 1);
                setTick((n) => n + 1);
              },
              Math.min(30_000, 2000 * 2 ** misses),
            );
          }
        }
      },
      (error) => live && setProblem(error instanceof Error ? error.message : String(error)),
    );
    return () => {
      live = false;
      clearTimeout(retry);
    };
  }, [...deps, tick]);
  return { data, problem, reload: useCallback(() => setTick((n) => n + 1), []) };
}
