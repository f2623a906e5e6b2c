// Loads a screen's data once (and again on `reload()`), with its error text.
import { useCallback, useEffect, useState } from 'preact/hooks';
import { errorText } from '../api/client';

type Answer<T> = { data?: T; error?: unknown; response: Response };

export function useApi<T>(load: () => Promise<Answer<T>>, deps: unknown[] = []): { data: T | undefined; problem: string | null; reload: () => void } {
  const [data, setData] = useState<T | undefined>(undefined);
  const [problem, setProblem] = useState<string | null>(null);
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let live = true;
    load().then(
      (answer) => {
        if (!live) return;
        if (answer.data !== undefined) {
          setData(answer.data);
          setProblem(null);
        } else setProblem(errorText(answer.error, answer.response.status));
      },
      (error) => live && setProblem(String(error)),
    );
    return () => {
      live = false;
    };
  }, [...deps, tick]);
  return { data, problem, reload: useCallback(() => setTick((n) => n + 1), []) };
}
