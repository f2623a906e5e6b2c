// The staff app in fleet mode (the fleet service serves the same build with <html data-mode="fleet">): fleet users sign
// in (password, single sign-on, invitation or printed token) and see the portfolio: health per site, the EUI ranking,
// one alert list, a site's meters; admins administer sites and people.
// The same app frame (components/AppFrame.tsx), styles and words as the site's app, with the fleet's own registry and
// session; each screen is its own chunk.
import { AppFrame, type FrameScreen } from '../components/AppFrame';
import { findScreen } from '../components/lazyScreens';
import { t } from '../i18n';
import { navigate, pathOf, route } from '../state/router';
import { fleetReady, fleetUser, signOut } from './session';
import { SignIn } from './SignIn';

type Role = 'viewer' | 'admin';

/** The fleet's screen registry: routes, and with `nav` the links of the navigation, in this order. */
const SCREENS: FrameScreen<Role>[] = [
  { pattern: /^\/(?:health)?$/, load: () => import('./Health'), role: 'viewer', title: 'fleet.health', nav: '/', current: /^\/(health|sites\/.*)?$/ },
  { pattern: /^\/eui$/, load: () => import('./Ranking'), role: 'viewer', title: 'fleet.ranking', nav: '/eui' },
  { pattern: /^\/alerts$/, load: () => import('./FleetAlerts'), role: 'viewer', title: 'fleet.alerts', nav: '/alerts' },
  { pattern: /^\/sites\/([0-9a-f-]{36})$/, load: () => import('./Site'), role: 'viewer', title: 'fleet.site' },
  { pattern: /^\/admin$/, load: () => import('./Admin'), role: 'admin', title: 'fleet.admin', nav: '/admin' },
];

/** A fleet viewer opens the portfolio; an admin everything. */
const can = (role: Role) => role === 'viewer' || fleetUser.value?.role === 'admin';

export function FleetApp() {
  const me = fleetUser.value;
  const { screen, params } = findScreen(SCREENS, pathOf(route.value));
  const forbidden = !!screen && !!me && screen.role !== 'public' && !can(screen.role);
  return (
    <AppFrame
      brand={{ name: t('fleet.brand') }}
      screens={SCREENS}
      identity={{
        ready: fleetReady.value,
        who: me && { name: me.name, title: t(me.role === 'admin' ? 'fleet.roleAdmin' : 'fleet.roleViewer') },
        navigable: me !== null,
        can,
        signOut: () => (signOut(), navigate('/')),
      }}
      shown={me ? { screen, params, forbidden } : { params: [], instead: <SignIn /> }}
      title={!me ? t('fleet.signInTitle') : screen ? t(screen.title) : t('notFound.title')}
    />
  );
}
