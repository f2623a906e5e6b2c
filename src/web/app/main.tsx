import { render } from 'preact';
import { App } from './App';
import { loadLanguage } from './i18n';
import { resume } from './state/session';
import './state/theme';
import './styles/app.css';

await Promise.all([loadLanguage(), resume()]);
const root = document.getElementById('app')!;
root.textContent = '';
render(<App />, root);
