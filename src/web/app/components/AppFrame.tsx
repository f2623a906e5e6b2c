// The one app frame of the site's app and the fleet's (issue 57 item 2): skip link, header (brand, menu button,
// navigation built from the app's screen registry, tools: theme, who is signed in, sign-out), the main landmark with
// the screen shown, "not allowed" or "not found", and the document's title. Each app hands in its registry, who is
// signed in (its own session) and what main shows; neither declares a header, a navigation or a main of its own
// (test/web/screens/appFrame.test.ts).
import type { ComponentChildren } from 'preact';
import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import { language, t, type Key } from '../i18n';
import { pathOf, route } from '../state/router';
import { theme, toggleTheme } from '../state/theme';
import { type LazyScreen, ScreenLoader, useFocusOnNavigation } from './lazyScreens';

/**
 * A row of an app's screen registry: a route (pattern, chunk, role, title) and, with `nav`, a link of the navigation,
 * which lists those rows in order under their titles. A link is current on its own path and the paths under it, or
 * where `current` matches.
 */
export type FrameScreen<Role extends string> = LazyScreen & { role: Role | 'public'; title: Key; nav?: string; current?: RegExp };

/** Who is signed in, as the app's own session has it. */
export type FrameIdentity<Role extends string> = {
  /** The session is known (resumed or found absent): nothing is drawn before. */
  ready: boolean;
  /** The person signed in: the name shown, its hover text, and where it links (their account), if anywhere. */
  who: { name: string; title: string; href?: string } | null;
  /** Whether the navigation is offered (a person who owes a new password first gets none). */
  navigable: boolean;
  can: (role: Role) => boolean;
  signOut: () => void;
};

/** What main shows: a screen of the registry, "not allowed" (`forbidden`), `instead` (e.g. a sign-in form), or "not found". */
export type Shown<Role extends string> = { screen?: FrameScreen<Role>; params: string[]; forbidden?: boolean; instead?: ComponentChildren };

/** The rows that are links, in the registry's order. */
export function navOf<Role extends string>(screens: FrameScreen<Role>[]): FrameScreen<Role>[] {
  return screens.filter((screen) => screen.nav && screen.role !== 'public');
}

function isCurrent(link: FrameScreen<string>, path: string): boolean {
  if (link.current) return link.current.test(path);
  return path === link.nav || path.startsWith(`${link.nav}/`);
}

/**
 * Whether the links fit one line beside the name and the tools; when they wrap (German, French or Spanish labels for
 * an admin at 1280 px), the header takes the menu button as on a narrow screen rather than growing to two lines. The
 * real layout decides: shown in full it is checked for a wrap; folded, it is shown in full again once wider than where
 * it wrapped, and on a new language or set of links.
 */
function useCompactHeader(navigable: boolean, links: number) {
  const ref = useRef<HTMLElement>(null);
  const wrappedAt = useRef(Number.POSITIVE_INFINITY);
  const toolsAt = useRef(0);
  const [value, setValue] = useState(false);
  useLayoutEffect(() => {
    wrappedAt.current = Number.POSITIVE_INFINITY;
    setValue(false);
  }, [language.value, links, navigable]);
  useLayoutEffect(() => {
    const header = ref.current;
    if (!header || !navigable) return;
    const check = () => {
      const room = header.clientWidth;
      const toolsWidth = header.querySelector('.tools')?.getBoundingClientRect().width ?? 0;
      if (header.classList.contains('compact')) {
        // Wider than where it wrapped, or the tools narrower ("Connecting…" became "Live"): try the full header again.
        if (room > wrappedAt.current || toolsWidth < toolsAt.current - 1) setValue(false);
        return;
      }
      const nav = header.querySelector('nav');
      const brand = header.querySelector('.brand');
      const items = nav?.querySelectorAll('li');
      if (!nav || !brand || !items?.length || getComputedStyle(nav).display === 'none' || window.innerWidth <= 1000) return;
      const row = brand.getBoundingClientRect();
      const first = items[0].getBoundingClientRect();
      const last = items[items.length - 1].getBoundingClientRect();
      const tools = header.querySelector('.tools')?.getBoundingClientRect();
      const below = (box: DOMRect | undefined) => !!box && box.top >= row.bottom - 1;
      if (last.top > first.top + 1 || below(first) || below(tools)) {
        wrappedAt.current = room;
        toolsAt.current = toolsWidth;
        setValue(true);
      }
    };
    check();
    const observer = new ResizeObserver(check);
    observer.observe(header);
    // The live badge's words change the tools' width without changing the header's.
    const tools = header.querySelector('.tools');
    if (tools) observer.observe(tools);
    return () => observer.disconnect();
  }, [language.value, links, navigable, value]);
  return { ref, value };
}

type HeaderProps<Role extends string> = {
  brand: { name: string; field?: string };
  links: FrameScreen<Role>[];
  identity: FrameIdentity<Role>;
  /** Shown first among the tools (the site's live badge). */
  tools?: ComponentChildren;
  /** Shown instead of the person and sign-out while nobody is signed in (the site's wallboard link). */
  signedOut?: ComponentChildren;
  /** Called after the theme was switched (the site keeps a signed-in person's choice). */
  themeChosen?: () => void;
};

function Header<Role extends string>({ brand, links, identity, tools, signedOut, themeChosen }: HeaderProps<Role>) {
  const [open, setOpen] = useState(false);
  const path = pathOf(route.value);
  const { who, navigable } = identity;
  useEffect(() => setOpen(false), [path]);
  const compact = useCompactHeader(navigable, links.length);
  return (
    <header class={compact.value ? 'top compact' : 'top'} ref={compact.ref}>
      <a class="brand" href="/">
        <span class="logo" aria-hidden="true">
          ⚡
        </span>
        <span data-field={brand.field}>{brand.name}</span>
      </a>
      {navigable && (
        <button type="button" class="menu-toggle" aria-expanded={open} aria-controls="nav" onClick={() => setOpen(!open)}>
          {t('nav.menu')}
        </button>
      )}
      {navigable && (
        <nav id="nav" class={open ? 'open' : ''} aria-label={t('nav.label')}>
          <ul>
            {links.map((link) => (
              <li key={link.nav}>
                <a href={link.nav} aria-current={isCurrent(link, path) ? 'page' : undefined}>
                  {t(link.title)}
                </a>
              </li>
            ))}
          </ul>
        </nav>
      )}
      <div class="tools">
        {tools}
        <button
          type="button"
          class="ghost"
          onClick={() => {
            toggleTheme();
            themeChosen?.();
          }}
          aria-label={t(theme.value === 'dark' ? 'theme.toLight' : 'theme.toDark')}
        >
          {theme.value === 'dark' ? '☀' : '☾'}
        </button>
        {who ? (
          <>
            {who.href ? (
              <a class="who" href={who.href} title={who.title}>
                {who.name}
              </a>
            ) : (
              <span class="who" title={who.title}>
                {who.name}
              </span>
            )}
            <button type="button" class="ghost" onClick={identity.signOut}>
              {t('nav.signOut')}
            </button>
          </>
        ) : (
          signedOut
        )}
      </div>
    </header>
  );
}

/** Main's content: the screen (its own chunk), "not allowed", what the app shows instead, or "not found" with the first link. */
function Content<Role extends string>({ shown, home }: { shown: Shown<Role>; home?: FrameScreen<Role> }) {
  if (shown.instead) return <>{shown.instead}</>;
  if (shown.forbidden)
    return (
      <section>
        <h1>{t('app.forbiddenTitle')}</h1>
        <p>{t('app.forbidden')}</p>
      </section>
    );
  if (shown.screen) return <ScreenLoader key={shown.screen.title + shown.params.join('/')} screen={shown.screen} params={shown.params} />;
  return (
    <section>
      <h1>{t('notFound.title')}</h1>
      <p>{t('notFound.text')}</p>
      {home && (
        <p>
          <a href={home.nav}>{t(home.title)}</a>
        </p>
      )}
    </section>
  );
}

export function AppFrame<Role extends string>(
  props: Omit<HeaderProps<Role>, 'links'> & {
    /** The app's screen registry: the navigation lists its rows with `nav` that the person may open. */
    screens: FrameScreen<Role>[];
    shown: Shown<Role>;
    /** The document's title before " · " and the brand's name. */
    title: string;
  },
) {
  const main = useRef<HTMLElement>(null);
  const { identity, shown, title, brand } = props;
  const path = pathOf(route.value);
  const nav = navOf(props.screens);
  const links = nav.filter((link) => identity.can(link.role as Role));
  useEffect(() => {
    document.title = `${title} · ${brand.name}`;
  }, [title, brand.name]);
  // A new path, or a sign-in or sign-out on the same path, is a new screen: focus moves to it.
  useFocusOnNavigation(main, [path, identity.who !== null]);
  if (!identity.ready) return null;
  return (
    <>
      <a class="skip" href="#main">
        {t('app.skip')}
      </a>
      <Header {...props} links={links} />
      <main id="main" ref={main} tabIndex={-1}>
        <Content shown={shown} home={nav[0]} />
      </main>
    </>
  );
}
