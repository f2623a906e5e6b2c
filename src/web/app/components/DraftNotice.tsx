// The notice a form shows while it holds a draft offered back (useDraft), with the button that discards it.
import { t } from '../i18n';

export function DraftNotice({ draft }: { draft: { restored: boolean; discard: () => void } }) {
  if (!draft.restored) return null;
  return (
    <p class="notice" role="status" data-notice="draft-restored">
      {t('draft.restored')}{' '}
      <button type="button" class="link" onClick={draft.discard}>
        {t('draft.discard')}
      </button>
    </p>
  );
}
