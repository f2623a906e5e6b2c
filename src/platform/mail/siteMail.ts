// What every outgoing mail says about where it comes from: the site's name, its language, number and date formats
// and time zone (read from the site's settings at each send, so a change applies to the next mail), and the base for
// its links (EMS_PUBLIC_URL, or the web portal's origin when only that is configured).
import { SiteFormat } from '../i18n/format.ts';
import type { Translate } from '../i18n/messages.ts';

/**
 * The port to the site's settings a mail needs (the site context's siteSettings reader, handed in by the composition
 * root: the platform is the floor and reads no context's table).
 */
export type SiteMailSettings = () => { siteName: string; locale: string; timezone: string; currency: string };

export type SiteMail = { site: string; t: Translate; format: SiteFormat; baseUrl: string; footer: string };

const DEFAULT_PUBLIC_URLS = new Set(['http://localhost:3000', 'https://localhost:3000']);

/** The links' base: EMS_PUBLIC_URL when set; when it is left at its localhost default, the portal origin if there is one. */
export function mailBaseUrl(publicUrl: string, portalOrigin: string | undefined): string {
  const base = DEFAULT_PUBLIC_URLS.has(publicUrl.replace(/\/$/, '')) && portalOrigin ? portalOrigin : publicUrl;
  return base.replace(/\/$/, '');
}

export function siteMailReader(settings: SiteMailSettings, baseUrl: string): () => SiteMail {
  let kept: { key: string; mail: SiteMail } | undefined;
  return () => {
    const { siteName, locale, timezone, currency } = settings();
    const row = { site: siteName, locale, timezone, currency };
    const key = `${row.site}|${row.locale}|${row.timezone}|${row.currency}`;
    if (kept?.key !== key) {
      const format = new SiteFormat(row);
      kept = { key, mail: { site: row.site, t: format.t, format, baseUrl, footer: format.t('mail.footer', { site: row.site, url: baseUrl }) } };
    }
    return kept.mail;
  };
}
