// Light or dark: the person's choice (kept on the server for the user and in localStorage), else the system's
// (prefers-color-scheme).
import { signal } from '@preact/signals';

export type Theme = 'light' | 'dark';
const KEY = 'ems.theme';
const system = window.matchMedia('(prefers-color-scheme: dark)');
const stored = localStorage.getItem(KEY);
export const theme = signal<Theme>(stored === 'light' || stored === 'dark' ? stored : system.matches ? 'dark' : 'light');

function apply(): void {
  document.documentElement.dataset.theme = theme.value;
}
apply();
theme.subscribe(apply);
system.addEventListener('change', (event) => {
  if (!localStorage.getItem(KEY)) theme.value = event.matches ? 'dark' : 'light';
});

export function toggleTheme(): void {
  setTheme(theme.value === 'dark' ? 'light' : 'dark');
}

/** A chosen theme (kept for this browser too, so the sign-in page shows it), or null: the system's again. */
export function setTheme(next: Theme | null): void {
  if (next) localStorage.setItem(KEY, next);
  else localStorage.removeItem(KEY);
  theme.value = next ?? (system.matches ? 'dark' : 'light');
}
