// The staff app in fleet mode (the fleet service serves the same build with <html data-mode="fleet">): fleet users sign
// in (password, single sign-on, invitation or printed token) and see the portfolio: health per site, the EUI ranking,
// one alert list, a site's meters; admins administer sites and people.
// Same frame, styles and words as the site's app; each screen is its own chunk.
import { useEffect, useRef, useState } from 'preact/hooks';
import { findScreen, type LazyScreen, ScreenLoader, useFocusOnNavigation } from '../components/lazyScreens';
import { type Key, t } from '../i18n';
import { navigate, pathOf, route } from '../state/router';
import { theme, toggleTheme } from '../state/theme';
import { fleetReady, fleetUser, signOut } from './session';
import { SignIn } from './SignIn';

type Screen = LazyScreen & { title: Key };

const SCREENS: Screen[] = [
  { pattern: /^\/(?:health)?$/, load: () => import('./Health'), title: 'fleet.health' },
  { pattern: /^\/eui$/, load: () => import('./Ranking'), title: 'fleet.ranking' },
  { pattern: /^\/alerts$/, load: () => import('./FleetAlerts'), title: 'fleet.alerts' },
  { pattern: /^\/sites\/([0-9a-f-]{36})$/, load: () => import('./Site'), title: 'fleet.site' },
  { pattern: /^\/admin$/, load: () => import('./Admin'), title: 'fleet.admin' },
];

const NAV: { href: string; label: Key; current: RegExp; admin?: true }[] = [
  { href: '/', label: 'fleet.health', current: /^\/(health|sites\/.*)?$/ },
  { href: '/eui', label: 'fleet.ranking', current: /^\/eui$/ },
  { href: '/alerts', label: 'fleet.alerts', current: /^\/alerts$/ },
  { href: '/admin', label: 'fleet.admin', current: /^\/admin$/, admin: true },
];

function Header() {
  const [open, setOpen] = useState(false);
  const path = pathOf(route.value);
  const signedIn = fleetUser.value !== null;
  useEffect(() => setOpen(false), [path]);
  return (
    <header class="top">
      <a class="brand" href="/">
        <span class="logo" aria-hidden="true">
          ⚡
        </span>
        <span>{t('fleet.brand')}</span>
      </a>
      {signedIn && (
        <button type="button" class="menu-toggle" aria-expanded={open} aria-controls="nav" onClick={() => setOpen(!open)}>
          {t('nav.menu')}
        </button>
      )}
      {signedIn && (
        <nav id="nav" class={open ? 'open' : ''} aria-label={t('nav.label')}>
          <ul>
            {NAV.filter((item) => !item.admin || fleetUser.value?.role === 'admin').map((item) => (
              <li key={item.href}>
                <a href={item.href} aria-current={item.current.test(path) ? 'page' : undefined}>
                  {t(item.label)}
                </a>
              </li>
            ))}
          </ul>
        </nav>
      )}
      <div class="tools">
        <button type="button" class="ghost" onClick={toggleTheme} aria-label={t(theme.value === 'dark' ? 'theme.toLight' : 'theme.toDark')}>
          {theme.value === 'dark' ? '☀' : '☾'}
        </button>
        {signedIn && (
          <>
            <span class="who" title={t(fleetUser.value!.role === 'admin' ? 'fleet.roleAdmin' : 'fleet.roleViewer')}>
              {fleetUser.value!.name}
            </span>
            <button type="button" class="ghost" onClick={() => (signOut(), navigate('/'))}>
              {t('nav.signOut')}
            </button>
          </>
        )}
      </div>
    </header>
  );
}

export function FleetApp() {
  const main = useRef<HTMLElement>(null);
  const path = pathOf(route.value);
  const { screen, params } = findScreen(SCREENS, path);
  const signedIn = fleetUser.value !== null;
  const title = !signedIn ? t('fleet.signInTitle') : screen ? t(screen.title) : t('notFound.title');
  useEffect(() => {
    document.title = `${title} · ${t('fleet.brand')}`;
  }, [title]);
  useFocusOnNavigation(main, [path, signedIn]);
  if (!fleetReady.value) return null;
  return (
    <>
      <a class="skip" href="#main">
        {t('app.skip')}
      </a>
      <Header />
      <main id="main" ref={main} tabIndex={-1}>
        {!signedIn ? (
          <SignIn />
        ) : screen ? (
          <ScreenLoader key={screen.title + params.join('/')} screen={screen} params={params} />
        ) : (
          <section>
            <h1>{t('notFound.title')}</h1>
            <p>{t('notFound.text')}</p>
            <p>
              <a href="/">{t('fleet.health')}</a>
            </p>
          </section>
        )}
      </main>
    </>
  );
}
