// A labelled form field; its error, when there is one, is tied to it (aria-describedby) and announced.
import type { ComponentChildren } from 'preact';
import { useId } from 'preact/hooks';
import { t } from '../i18n';

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

/**
 * A new password: a labelled password field the browser may fill with a generated one (`new-password`), required, with
 * the password rules (or the screen's own hint) tied to it. Account, the emailed-code flow and the set-up link use it.
 */
export function NewPasswordField(props: { label: string; value: string; set: (value: string) => void; hint?: string; name?: string }) {
  return (
    <Field label={props.label} hint={props.hint ?? t('field.passwordHint')}>
      {(id, hint) => (
        <input
          id={id}
          name={props.name}
          type="password"
          autocomplete="new-password"
          aria-describedby={hint}
          required
          value={props.value}
          onInput={(e) => props.set(e.currentTarget.value)}
        />
      )}
    </Field>
  );
}
