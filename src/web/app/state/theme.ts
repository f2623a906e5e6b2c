// Light or dark: the person's choice (kept in localStorage), else the system's (prefers-color-scheme).
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
  theme.value = theme.value === 'dark' ? 'light' : 'dark';
  localStorage.setItem(KEY, theme.value);
}
