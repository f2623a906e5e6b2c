// Suspect runs of every meter (issue 52): the list with "confirm as real" for an operator or admin, read-only for a viewer.
import { SuspectRunList } from '../components/suspectRuns';
import { t } from '../i18n';

export default function SuspectRuns() {
  return (
    <section>
      <h1>{t('suspects.title')}</h1>
      <SuspectRunList heading={t('suspects.all')} />
    </section>
  );
}
