import { render } from 'preact';
import { App } from './App';
import { loadLanguage } from './i18n';
import { resume } from './state/session';
import './state/theme';
import './state/preferences';
import './styles/app.css';

/** Served by the fleet service (<html data-mode="fleet">): the portfolio screens and fleet sign-in, their own chunk. */
async function fleetApp() {
  const [{ FleetApp }, { resumeFleet }] = await Promise.all([import('./fleet/FleetApp'), import('./fleet/session')]);
  await resumeFleet();
  return FleetApp;
}

const fleet = document.documentElement.dataset.mode === 'fleet';
const [, Fleet] = await Promise.all([loadLanguage(), fleet ? fleetApp() : resume().then(() => null)]);
const root = document.getElementById('app')!;
root.textContent = '';
render(Fleet ? <Fleet /> : <App />, root);
