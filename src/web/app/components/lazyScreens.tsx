// The route table's shared parts, for the site's app and the fleet's: a screen is its own chunk, loaded when first
// opened and kept; the path picks the first screen whose pattern matches; focus moves to the new screen on navigation.
import type { ComponentType, RefObject } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { t } from '../i18n';

export type LazyScreen = { pattern: RegExp; load: () => Promise<{ default: ComponentType<{ params: string[] }> }> };

const loaded = new Map<LazyScreen, ComponentType<{ params: string[] }>>();

/** The screen's component once its chunk is in, "loading" until then, a message if the chunk cannot be fetched. */
export function ScreenLoader({ screen, params }: { screen: LazyScreen; params: string[] }) {
  const [Component, setComponent] = useState(() => loaded.get(screen));
  const [failed, setFailed] = useState(false);
  useEffect(() => {
    if (loaded.has(screen)) return setComponent(() => loaded.get(screen));
    setComponent(undefined);
    screen.load().then(
      (module) => {
        loaded.set(screen, module.default);
        setComponent(() => module.default);
      },
      () => setFailed(true),
    );
  }, [screen]);
  if (failed) return <p role="alert">{t('app.loadFailed')}</p>;
  if (!Component)
    return (
      <p class="muted" aria-busy="true">
        {t('app.loading')}
      </p>
    );
  return <Component params={params} />;
}

/** The first screen whose pattern matches the path, with its captured (decoded) parts. */
export function findScreen<S extends LazyScreen>(screens: S[], path: string): { screen?: S; params: string[] } {
  for (const screen of screens) {
    const match = screen.pattern.exec(path);
    if (match) return { screen, params: match.slice(1).map(decodeURIComponent) };
  }
  return { params: [] };
}

/** Focus moves to `main` when `deps` change after the first render, as a page load would, for keyboard and screen readers. */
export function useFocusOnNavigation(main: RefObject<HTMLElement | null>, deps: unknown[]): void {
  const first = useRef(true);
  useEffect(() => {
    if (first.current) {
      first.current = false;
      return;
    }
    main.current?.focus();
  }, deps);
}
