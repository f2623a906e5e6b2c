// The frame (skip link, header, navigation, main) and the route table: each screen is its own chunk, loaded when
// first opened; a screen that needs a role the person lacks is not linked and says so when opened.
import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import { findScreen, type LazyScreen, ScreenLoader, useFocusOnNavigation } from './components/lazyScreens';
import { language, siteName, t, timeOfDay, type Key } from './i18n';
import { navigate, pathOf, route } from './state/router';
import { lastHeard, liveState, startLive, stopLive } from './state/live';
import { can, ready, signOut, user } from './state/session';
import { savePreferences } from './state/preferences';
import { theme, toggleTheme } from './state/theme';

type Role = 'viewer' | 'operator' | 'admin';
type Screen = LazyScreen & { role: Role | 'public'; title: Key; nav?: string };

/**
 * The one screen registry: each row is a route (pattern, chunk, role, title) and, with `nav`, a link of the navigation,
 * which lists those rows in this order under their titles. Patterns are anchored: the order matters for the links only.
 */
const SCREENS: Screen[] = [
  { pattern: /^\/(?:overview)?$/, load: () => import('./screens/Overview'), role: 'viewer', title: 'nav.overview', nav: '/' },
  { pattern: /^\/energy$/, load: () => import('./screens/Energy'), role: 'viewer', title: 'nav.energy', nav: '/energy' },
  { pattern: /^\/areas\/([^/]+)$/, load: () => import('./screens/Area'), role: 'viewer', title: 'nav.overview' },
  { pattern: /^\/meters\/(\d+)$/, load: () => import('./screens/Meter'), role: 'viewer', title: 'nav.overview' },
  { pattern: /^\/analysis$/, load: () => import('./screens/Analysis'), role: 'viewer', title: 'nav.analysis', nav: '/analysis' },
  { pattern: /^\/analysis\/baseline$/, load: () => import('./screens/Baseline'), role: 'viewer', title: 'baseline.title' },
  { pattern: /^\/analysis\/enpi$/, load: () => import('./screens/Enpi'), role: 'viewer', title: 'enpi.title' },
  { pattern: /^\/analysis\/anomalies$/, load: () => import('./screens/Anomalies'), role: 'viewer', title: 'anomalies.title' },
  { pattern: /^\/alerts$/, load: () => import('./screens/Alerts'), role: 'viewer', title: 'nav.alerts', nav: '/alerts' },
  { pattern: /^\/faults$/, load: () => import('./screens/Faults'), role: 'viewer', title: 'nav.faults', nav: '/faults' },
  { pattern: /^\/faults\/by-money$/, load: () => import('./screens/FaultsByMoney'), role: 'viewer', title: 'fdd.title' },
  { pattern: /^\/faults\/rules$/, load: () => import('./screens/FaultRules'), role: 'viewer', title: 'fddRules.title' },
  { pattern: /^\/faults\/equipment\/([^/]+)$/, load: () => import('./screens/FddEquipment'), role: 'viewer', title: 'fddEquipment.heading' },
  { pattern: /^\/maintenance$/, load: () => import('./screens/Maintenance'), role: 'viewer', title: 'nav.maintenance', nav: '/maintenance' },
  { pattern: /^\/reports$/, load: () => import('./screens/Reports'), role: 'viewer', title: 'nav.reports', nav: '/reports' },
  { pattern: /^\/exports$/, load: () => import('./screens/Exports'), role: 'viewer', title: 'nav.exports', nav: '/exports' },
  { pattern: /^\/billing$/, load: () => import('./screens/Billing'), role: 'viewer', title: 'nav.billing', nav: '/billing' },
  { pattern: /^\/billing\/tenants$/, load: () => import('./screens/DeskTenants'), role: 'viewer', title: 'desk.tenants.title' },
  { pattern: /^\/billing\/runs$/, load: () => import('./screens/DeskRuns'), role: 'viewer', title: 'desk.runs.title' },
  { pattern: /^\/billing\/supplier-bills$/, load: () => import('./screens/DeskSupplierBills'), role: 'viewer', title: 'desk.bills.title' },
  { pattern: /^\/billing\/budgets$/, load: () => import('./screens/DeskBudgets'), role: 'viewer', title: 'desk.budgets.title' },
  { pattern: /^\/billing\/measures$/, load: () => import('./screens/DeskMeasures'), role: 'viewer', title: 'desk.measures.title' },
  { pattern: /^\/billing\/tariffs$/, load: () => import('./screens/DeskTariffs'), role: 'viewer', title: 'desk.tariffs.title' },
  { pattern: /^\/admin\/meters$/, load: () => import('./screens/AdminMeters'), role: 'admin', title: 'meters.title' },
  { pattern: /^\/admin\/tariffs$/, load: () => import('./screens/AdminTariffs'), role: 'admin', title: 'tariffs.title' },
  { pattern: /^\/admin\/notifications$/, load: () => import('./screens/AdminNotifications'), role: 'admin', title: 'rules.title' },
  { pattern: /^\/admin\/load-shedding$/, load: () => import('./screens/AdminLoadShedding'), role: 'admin', title: 'shedding.title' },
  { pattern: /^\/admin\/import$/, load: () => import('./screens/AdminImport'), role: 'admin', title: 'import.title' },
  { pattern: /^\/suspect-runs$/, load: () => import('./screens/SuspectRuns'), role: 'viewer', title: 'suspects.title' },
  { pattern: /^\/admin\/fdd-mapping$/, load: () => import('./screens/FddMapping'), role: 'admin', title: 'fddMapping.title' },
  { pattern: /^\/settings$/, load: () => import('./screens/Settings'), role: 'admin', title: 'nav.settings', nav: '/settings' },
  { pattern: /^\/admin$/, load: () => import('./screens/Admin'), role: 'admin', title: 'nav.admin', nav: '/admin' },
  { pattern: /^\/account$/, load: () => import('./screens/Account'), role: 'viewer', title: 'nav.account' },
  { pattern: /^\/login$/, load: () => import('./screens/Login'), role: 'public', title: 'login.title' },
  { pattern: /^\/forgot$/, load: () => import('./screens/Forgot'), role: 'public', title: 'forgot.title' },
  { pattern: /^\/first-sign-in$/, load: () => import('./screens/FirstSignIn'), role: 'public', title: 'firstSignIn.title' },
  { pattern: /^\/register$/, load: () => import('./screens/Register'), role: 'public', title: 'register.title' },
];

const NAV = SCREENS.flatMap((screen) => (screen.nav && screen.role !== 'public' ? [{ href: screen.nav, label: screen.title, role: screen.role }] : []));

/** The live stream's state in words: live, or stale since the last news (while it reconnects). */
function LiveBadge() {
  const state = liveState.value;
  if (state === 'off') return null;
  const heard = lastHeard.value;
  const text =
    state === 'live' ? t('live.on') : state === 'connecting' ? t('live.connecting') : heard ? t('live.staleSince', { at: timeOfDay(heard) }) : t('live.stale');
  return (
    <span class={`live-badge ${state}`} role="status" data-live={state}>
      <span class="dot" aria-hidden="true" />
      <span class="text">{text}</span>
    </span>
  );
}

/**
 * Whether the links fit one line beside the name and the tools; when they wrap (German, French or Spanish labels for
 * an admin at 1280 px), the header takes the menu button as on a narrow screen rather than growing to two lines. The
 * real layout decides: shown in full it is checked for a wrap; folded, it is shown in full again once wider than where
 * it wrapped, and on a new language or set of links.
 */
function useCompactHeader(navigable: boolean) {
  const ref = useRef<HTMLElement>(null);
  const wrappedAt = useRef(Number.POSITIVE_INFINITY);
  const toolsAt = useRef(0);
  const [value, setValue] = useState(false);
  const links = NAV.filter((item) => can(item.role)).length;
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

function Header() {
  const [open, setOpen] = useState(false);
  const path = pathOf(route.value);
  const signedIn = user.value !== null;
  // While a new password is owed no other screen opens: a menu of them would only lead back here.
  const navigable = signedIn && !user.value!.mustChangePassword;
  useEffect(() => setOpen(false), [path]);
  const compact = useCompactHeader(navigable);
  return (
    <header class={compact.value ? 'top compact' : 'top'} ref={compact.ref}>
      <a class="brand" href="/">
        <span class="logo" aria-hidden="true">
          ⚡
        </span>
        <span data-field="siteName">{siteName.value}</span>
      </a>
      {navigable && (
        <button type="button" class="menu-toggle" aria-expanded={open} aria-controls="nav" onClick={() => setOpen(!open)}>
          {t('nav.menu')}
        </button>
      )}
      {navigable && (
        <nav id="nav" class={open ? 'open' : ''} aria-label={t('nav.label')}>
          <ul>
            {NAV.filter((item) => can(item.role)).map((item) => {
              const current = item.href === '/' ? path === '/' || /^\/(overview|areas|meters)/.test(path) : path.startsWith(item.href);
              return (
                <li key={item.href}>
                  <a href={item.href} aria-current={current ? 'page' : undefined}>
                    {t(item.label)}
                  </a>
                </li>
              );
            })}
          </ul>
        </nav>
      )}
      <div class="tools">
        {signedIn && <LiveBadge />}
        <button
          type="button"
          class="ghost"
          onClick={() => {
            toggleTheme();
            // Signed in, the choice is the person's on every device (state/preferences.ts).
            if (signedIn) void savePreferences({ theme: theme.value });
          }}
          aria-label={t(theme.value === 'dark' ? 'theme.toLight' : 'theme.toDark')}
        >
          {theme.value === 'dark' ? '☀' : '☾'}
        </button>
        {signedIn ? (
          <>
            <a class="who" href="/account" title={t('nav.account')}>
              {user.value!.displayName || user.value!.username}
            </a>
            <button type="button" class="ghost" onClick={() => signOut().then(() => navigate('/login'))}>
              {t('nav.signOut')}
            </button>
          </>
        ) : (
          <a href="/wallboard">{t('nav.wallboard')}</a>
        )}
      </div>
    </header>
  );
}

export function App() {
  const main = useRef<HTMLElement>(null);
  const path = pathOf(route.value);
  const { screen, params } = findScreen(SCREENS, path);
  const signedIn = user.value !== null;
  let shown = screen;
  let shownParams = params;
  let forbidden = false;
  if (screen && screen.role !== 'public' && !signedIn) {
    shown = SCREENS.find((s) => s.title === 'login.title');
    shownParams = [];
  } else if (signedIn && user.value!.mustChangePassword && path !== '/account') {
    shown = SCREENS.find((s) => s.title === 'nav.account');
  } else if (signedIn && screen && screen.role === 'public') {
    // Signed in on /login: go where the sign-in was asked for.
    queueMicrotask(() => navigate(new URLSearchParams(location.search).get('next') || '/', true));
  } else if (screen && screen.role !== 'public' && !can(screen.role)) {
    forbidden = true;
  }
  const title = shown ? t(shown.title) : t('notFound.title');
  useEffect(() => {
    document.title = `${title} · ${siteName.value}`;
  }, [title, siteName.value]);
  useFocusOnNavigation(main, [path]);
  // One stream per tab while someone is signed in (state/live.ts).
  useEffect(() => {
    if (signedIn) startLive();
    else stopLive();
  }, [signedIn]);
  if (!ready.value) return null;
  return (
    <>
      <a class="skip" href="#main">
        {t('app.skip')}
      </a>
      <Header />
      <main id="main" ref={main} tabIndex={-1}>
        {forbidden ? (
          <section>
            <h1>{t('app.forbiddenTitle')}</h1>
            <p>{t('app.forbidden')}</p>
          </section>
        ) : shown ? (
          <ScreenLoader key={shown.title + shownParams.join('/')} screen={shown} params={shownParams} />
        ) : (
          <section>
            <h1>{t('notFound.title')}</h1>
            <p>{t('notFound.text')}</p>
            <p>
              <a href="/">{t('nav.overview')}</a>
            </p>
          </section>
        )}
      </main>
    </>
  );
}
