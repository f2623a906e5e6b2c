// Site settings for admins, also the first-run setup (after the initial admin's password change): site name, time
// zone (searchable: typed with the zones offered as suggestions; on the first run guessed from the browser), currency, energy price, language (GET and PUT /api/configs); whether mail leaves the box
// (GET /api/configs/mail) and "send me a test mail" with its outcome (POST /api/configs/test-mail).
import { useEffect, useState } from 'preact/hooks';
import { api, errorText } from '../api/client';
import type { Answer } from '../api/types';
import { Done, Field, Problem } from '../components/Field';
import { useApi } from '../components/useApi';
import { applySite, browserTimeZone, t } from '../i18n';
import { queryOf, route } from '../state/router';

const ZONES: string[] = Intl.supportedValuesOf?.('timeZone') ?? ['UTC'];
const CURRENCIES = ['EUR', 'CHF', 'GBP', 'USD', 'SEK', 'NOK', 'DKK', 'PLN', 'CZK'];

export default function Settings() {
  const firstRun = queryOf(route.value).has('firstRun');
  const config = useApi(() => api.GET('/api/configs'));
  const [form, setForm] = useState({ siteName: '', timezone: 'UTC', currency: 'EUR', electricityPrice: '', locale: 'en' });
  const [problem, setProblem] = useState<string | null>(null);
  const [done, setDone] = useState<string | null>(null);
  // Which price prices today's energy: the one entered here, a tariff an admin entered, or the one seeded at install (issue 52).
  const [inForce, setInForce] = useState<NonNullable<typeof config.data>['priceInForce']>(null);
  const [guessed, setGuessed] = useState(false);
  useEffect(() => {
    const c = config.data;
    if (!c) return;
    // First run on a box still at UTC: the browser's zone is the better guess (said so under the field).
    const guess = firstRun && c.timezone === 'UTC' ? browserTimeZone() : undefined;
    const timezone = guess && ZONES.includes(guess) ? guess : c.timezone;
    setGuessed(timezone !== c.timezone);
    setForm({ siteName: c.siteName, timezone, currency: c.currency, electricityPrice: String(c.electricityPrice), locale: c.locale });
    setInForce(c.priceInForce);
  }, [config.data]);
  const set = (key: keyof typeof form) => (event: Event) => setForm({ ...form, [key]: (event.currentTarget as HTMLInputElement).value });
  const zones = ZONES;

  async function save(event: Event) {
    event.preventDefault();
    setDone(null);
    const price = Number(form.electricityPrice.replace(',', '.'));
    if (!Number.isFinite(price) || price < 0) return setProblem(t('settings.badPrice'));
    if (!ZONES.includes(form.timezone) && form.timezone !== config.data?.timezone) return setProblem(t('settings.badZone', { zone: form.timezone }));
    const { data, error, response } = await api.PUT('/api/configs', {
      body: { siteName: form.siteName.trim(), timezone: form.timezone, currency: form.currency, electricityPrice: price, locale: form.locale },
    });
    if (!data) return setProblem(errorText(error, response.status));
    setProblem(null);
    setInForce(data.priceInForce);
    setDone(t('settings.saved'));
    applySite(data.siteName, data.timezone);
    setGuessed(false);
  }

  return (
    <section class="narrow">
      <h1>{firstRun ? t('settings.firstRunTitle') : t('nav.settings')}</h1>
      {firstRun && <p class="notice">{t('settings.firstRunText')}</p>}
      <Problem text={config.problem} />
      <form class="stack" onSubmit={save} noValidate>
        <Field label={t('settings.siteName')}>{(id) => <input id={id} required maxLength={100} value={form.siteName} onInput={set('siteName')} />}</Field>
        <Field label={t('settings.timezone')} hint={guessed ? `${t('settings.timezoneGuessed')} ${t('settings.timezoneHint')}` : t('settings.timezoneHint')}>
          {(id, hint) => (
            <>
              <input id={id} aria-describedby={hint} list="zone-list" autoComplete="off" spellcheck={false} value={form.timezone} onInput={set('timezone')} />
              <datalist id="zone-list">
                {zones.map((zone) => (
                  <option key={zone} value={zone} />
                ))}
              </datalist>
            </>
          )}
        </Field>
        <Field label={t('settings.currency')}>
          {(id) => (
            <select id={id} value={form.currency} onChange={set('currency')}>
              {(CURRENCIES.includes(form.currency) ? CURRENCIES : [form.currency, ...CURRENCIES]).map((code) => (
                <option key={code} value={code}>
                  {code}
                </option>
              ))}
            </select>
          )}
        </Field>
        <Field
          label={t('settings.price', { currency: form.currency })}
          hint={
            inForce
              ? t(`settings.priceInForce.${inForce.source}`, { price: String(inForce.price), currency: form.currency, validFrom: inForce.validFrom })
              : undefined
          }
        >
          {(id) => <input id={id} inputMode="decimal" required value={form.electricityPrice} onInput={set('electricityPrice')} />}
        </Field>
        <Field label={t('settings.locale')}>
          {(id) => (
            <select id={id} value={form.locale} onChange={set('locale')}>
              {['en', 'en-GB', 'de', 'de-DE', 'de-AT', 'de-CH', 'fr', 'fr-FR', 'fr-CH', 'es', 'es-ES']
                .concat(form.locale)
                .filter((v, i, a) => a.indexOf(v) === i)
                .map((tag) => (
                  <option key={tag} value={tag}>
                    {tag}
                  </option>
                ))}
            </select>
          )}
        </Field>
        <Problem text={problem} />
        <Done text={done} />
        <button type="submit" class="primary">
          {t('settings.save')}
        </button>
        {/* The first-run set-up is one step: once saved, the way on is the overview (mail can be checked below first). */}
        {firstRun && done && (
          <p>
            <a class="button primary" href="/" data-action="first-run-done">
              {t('settings.firstRunDone')}
            </a>
          </p>
        )}
      </form>
      <MailCheck />
    </section>
  );
}

function MailCheck() {
  const state = useApi(() => api.GET('/api/configs/mail'));
  const [outcome, setOutcome] = useState<Answer<'/api/configs/test-mail', 'post'> | null>(null);
  const [busy, setBusy] = useState(false);
  async function send() {
    setBusy(true);
    const { data } = await api.POST('/api/configs/test-mail', { body: {} });
    setBusy(false);
    if (data) setOutcome(data);
  }
  return (
    <section class="stack mail-check" aria-labelledby="mail-heading">
      <h2 id="mail-heading">{t('settings.mail')}</h2>
      {state.data && (
        <p class={state.data.smtpConfigured ? 'muted' : 'notice'} data-field="mailState">
          {state.data.smtpConfigured ? t('settings.mailConfigured') : t('settings.mailNotConfigured')}
        </p>
      )}
      <p>
        <button type="button" onClick={send} disabled={busy}>
          {t('settings.testMail')}
        </button>
      </p>
      {outcome && (
        <p role="status" class={`outcome ${outcome.delivery}`} data-delivery={outcome.delivery}>
          {outcome.delivery === 'sent'
            ? t('settings.testMail.sent', { to: outcome.to })
            : outcome.delivery === 'logged'
              ? t('settings.testMail.logged', { to: outcome.to })
              : t('reports.delivery.failed', { error: outcome.error ?? '' })}
        </p>
      )}
    </section>
  );
}
