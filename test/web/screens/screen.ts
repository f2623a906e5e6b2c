// The fast screen tier's rig: a screen rendered into the happy-dom page (dom.ts, imported first) against a stubbed
// client — the app's own `api` object (api/client.ts) with its GET/POST/PUT/PATCH/DELETE replaced by a table of
// answers, so the screen runs its real code down to the call and no further. A call the table lacks fails the test
// with its method and path. The answers are typed by the generated schema (api/types.ts `Answer`).
import './dom.ts';
import assert from 'node:assert/strict';
import { type ComponentType, h, render } from 'preact';
import { api } from '../../../src/web/app/api/client.ts';
import type { User } from '../../../src/web/app/api/types.ts';
import { loadLanguage } from '../../../src/web/app/i18n/index.ts';
import { user } from '../../../src/web/app/state/session.ts';

type Verb = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
export type Call = { method: Verb; path: string; params: { path?: Record<string, unknown>; query?: Record<string, unknown> }; body: unknown };
/** A route's answer: its body (200), or `refuse(status, error)`. */
export type Reply = (call: Call) => unknown;

const REFUSAL = Symbol('refusal');
type Refusal = { [REFUSAL]: true; status: number; error: unknown };
export function refuse(status: number, error: string, details?: { path: string; message: string }[]): Refusal {
  return { [REFUSAL]: true, status, error: { error, code: status === 400 ? 'VALIDATION' : 'CONFLICT', ...(details ? { details } : {}) } };
}
const isRefusal = (value: unknown): value is Refusal => typeof value === 'object' && value !== null && REFUSAL in value;

/** Every call the screens made, in order. */
export const calls: Call[] = [];
let table: Record<string, Reply> = {};

for (const method of ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const) {
  const stub = async (path: string, init: { params?: Call['params']; body?: unknown } = {}) => {
    const call: Call = { method, path, params: init.params ?? {}, body: init.body };
    calls.push(call);
    const reply = table[`${method} ${path}`];
    if (!reply) throw new Error(`the screen called ${method} ${path}, which this test's stub does not answer`);
    const value = await reply(call);
    if (isRefusal(value)) return { data: undefined, error: value.error, response: new Response(null, { status: value.status }) };
    return { data: value, error: undefined, response: new Response(null, { status: 200 }) };
  };
  (api as unknown as Record<Verb, unknown>)[method] = stub;
}

/** Answers these routes (`'GET /api/alerts'` → its body) from now on, and forgets the calls so far. */
export function stubApi(routes: Record<string, Reply>): void {
  table = routes;
  calls.length = 0;
}

const PEOPLE: Record<User['role'], User> = Object.fromEntries(
  (['viewer', 'operator', 'admin'] as const).map((role, id) => [
    role,
    {
      id: id + 1,
      username: role,
      email: `${role}@example.test`,
      role,
      displayName: null,
      avatarUrl: null,
      phone: null,
      language: null,
      theme: null,
      mustChangePassword: false,
      createdAt: '2026-01-01T00:00:00.000Z',
      updatedAt: '2026-01-01T00:00:00.000Z',
      lastLoginAt: null,
    },
  ]),
) as Record<User['role'], User>;

let mounted: HTMLElement | null = null;

/** Renders the screen as this person (English), replacing the one rendered before. */
export async function mount<P>(screen: ComponentType<P>, props: P, as: User['role'] = 'operator'): Promise<HTMLElement> {
  unmount();
  await loadLanguage('en');
  user.value = PEOPLE[as];
  mounted = document.createElement('main');
  document.body.append(mounted);
  render(h(screen as ComponentType<object>, props as object), mounted);
  return mounted;
}

export function unmount(): void {
  if (!mounted) return;
  render(null, mounted);
  mounted.remove();
  mounted = null;
}

/** Polls until `find` gives something (generous: a busy machine), and gives it. */
export async function waitFor<T>(find: () => T | null | undefined | false, what: string, timeoutMs = 10_000): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const found = find();
    if (found) return found;
    if (Date.now() > until) assert.fail(`waited ${timeoutMs} ms for ${what}; the screen shows: ${mounted?.textContent?.slice(0, 400)}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** The element matching the selector in the screen (fails when there is none). */
export function $(selector: string, root: ParentNode = document): HTMLElement {
  const found = root.querySelector<HTMLElement>(selector);
  assert.ok(found, `no ${selector} in the screen`);
  return found;
}
export const $$ = (selector: string, root: ParentNode = document): HTMLElement[] => [...root.querySelectorAll<HTMLElement>(selector)];
export const text = (element: Element | null | undefined): string => element?.textContent?.trim() ?? '';

/** A button or link by its text. */
export function byText(selector: string, label: string | RegExp, root: ParentNode = document): HTMLElement | undefined {
  return $$(selector, root).find((el) => (typeof label === 'string' ? text(el) === label : label.test(text(el))));
}

/** Types into an input or select as a person would (value, then input and change events), and lets preact render. */
export async function fill(element: HTMLElement, value: string): Promise<void> {
  (element as HTMLInputElement).value = value;
  element.dispatchEvent(new window.Event('input', { bubbles: true }));
  element.dispatchEvent(new window.Event('change', { bubbles: true }));
  await rendered();
}

/** Preact renders a state change on a later turn: what a person's next action sees. */
export const rendered = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 0));

/** The form control a label names. */
export function labelled(label: string | RegExp): HTMLElement {
  const found = $$('label').find((l) => (typeof label === 'string' ? text(l) === label : label.test(text(l))));
  assert.ok(found, `no label ${label}`);
  const id = found.getAttribute('for');
  return id ? (document.getElementById(id) as HTMLElement) : $('input, select, textarea', found);
}
