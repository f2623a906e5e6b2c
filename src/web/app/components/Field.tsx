// A labelled form field; its error, when there is one, is tied to it (aria-describedby) and announced.
import type { ComponentChildren } from 'preact';
import { useId } from 'preact/hooks';

export function Field({ label, hint, children }: { label: string; hint?: string; children: (id: string, describedBy?: string) => ComponentChildren }) {
  const id = useId();
  const hintId = hint ? `${id}-hint` : undefined;
  return (
    <div class="field">
      <label for={id}>{label}</label>
      {children(id, hintId)}
      {hint && (
        <small id={hintId} class="muted">
          {hint}
        </small>
      )}
    </div>
  );
}

export function Problem({ text }: { text: string | null }) {
  return (
    <p class="problem" role="alert" hidden={!text}>
      {text}
    </p>
  );
}

export function Done({ text }: { text: string | null }) {
  return (
    <p class="done" role="status">
      {text}
    </p>
  );
}
