// The site's app: its screen registry and who is signed in, in the one app frame (components/AppFrame.tsx: skip link,
// header, navigation, main) that the fleet's app uses too. Each screen is its own chunk, loaded when first opened; a
// screen that needs a role the person lacks is not linked and says so when opened.
import { useEffect } from 'preact/hooks';
import { AppFrame, type FrameScreen, type Shown } from './components/AppFrame';
import { findScreen } from './components/lazyScreens';
import { siteName, t, timeOfDay } from './i18n';
import { navigate, pathOf, route } from './state/router';
import { lastHeard, liveState, startLive, stopLive } from './state/live';
import { can, ready, signOut, user } from './state/session';
import { savePreferences } from './state/preferences';
import { theme } from './state/theme';

type Role = 'viewer' | 'operator' | 'admin';
type Screen = FrameScreen<Role>;

/**
 * The one screen registry: each row is a route (pattern, chunk, role, title) and, with `nav`, a link of the navigation,
 * which lists those rows in this order under their titles (the person's role permitting), each current on its path and
 * below (or where `current` matches). Patterns are anchored: the order matters for the links only.
 */
const SCREENS: Screen[] = [
  {
    pattern: /^\/(?:overview)?$/,
    load: () => import('./screens/Overview'),
    role: 'viewer',
    title: 'nav.overview',
    nav: '/',
    current: /^\/(?:$|overview|areas|meters)/,
  },
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

/** What main shows for the path: the sign-in for a signed-out person, the password change while one is owed. */
function shownFor(path: string): Shown<Role> {
  const { screen, params } = findScreen(SCREENS, path);
  const signedIn = user.value !== null;
  if (screen && screen.role !== 'public' && !signedIn) return { screen: SCREENS.find((s) => s.title === 'login.title'), params: [] };
  if (signedIn && user.value!.mustChangePassword && path !== '/account') return { screen: SCREENS.find((s) => s.title === 'nav.account'), params };
  if (signedIn && screen && screen.role === 'public') {
    // Signed in on /login: go where the sign-in was asked for.
    queueMicrotask(() => navigate(new URLSearchParams(location.search).get('next') || '/', true));
  } else if (screen && screen.role !== 'public' && !can(screen.role)) {
    return { screen, params, forbidden: true };
  }
  return { screen, params };
}

export function App() {
  const shown = shownFor(pathOf(route.value));
  const me = user.value;
  const signedIn = me !== null;
  // One stream per tab while someone is signed in (state/live.ts).
  useEffect(() => {
    if (signedIn) startLive();
    else stopLive();
  }, [signedIn]);
  return (
    <AppFrame
      brand={{ name: siteName.value, field: 'siteName' }}
      screens={SCREENS}
      identity={{
        ready: ready.value,
        who: me && { name: me.displayName || me.username, title: t('nav.account'), href: '/account' },
        // While a new password is owed no other screen opens: a menu of them would only lead back here.
        navigable: signedIn && !me.mustChangePassword,
        can,
        signOut: () => void signOut().then(() => navigate('/login')),
      }}
      shown={shown}
      title={shown.screen ? t(shown.screen.title) : t('notFound.title')}
      tools={signedIn && <LiveBadge />}
      signedOut={<a href="/wallboard">{t('nav.wallboard')}</a>}
      // Signed in, the choice is the person's on every device (state/preferences.ts).
      themeChosen={signedIn ? () => void savePreferences({ theme: theme.value }) : undefined}
    />
  );
}
