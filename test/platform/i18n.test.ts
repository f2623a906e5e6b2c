// Localisation: every language file carries every key of en.json with the same placeholders; alert, code and report
// mails name the site, link to EMS_PUBLIC_URL and speak the site's language (German here), through a real SMTP server.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { languages, translator } from '../../src/platform/i18n/messages.ts';
import { SiteFormat } from '../../src/platform/i18n/format.ts';
import { mailBaseUrl } from '../../src/platform/mail/siteMail.ts';
import { eventually, startTestServer, type TestServer, type TestUser } from '../helpers/server.ts';
import { startMailCatcher, type MailCatcher } from '../helpers/smtp.ts';

/** The decoded subject and text/plain body of a captured message (quoted-printable or base64, RFC 2047 subjects). */
function readMail(raw: string): { subject: string; text: string } {
  const [head] = raw.split(/\r\n\r\n/);
  const subjectRaw = /^Subject: (.*(?:\r\n[ \t].*)*)/im.exec(head)?.[1] ?? '';
  const subject = subjectRaw
    .replace(/\r\n[ \t]/g, ' ')
    .replace(/\?=\s+=\?/g, '?==?')
    .replace(/=\?utf-8\?([QB])\?([^?]*)\?=/gi, (_, kind: string, text: string) =>
      kind.toUpperCase() === 'B'
        ? Buffer.from(text, 'base64').toString('utf8')
        : Buffer.from(
            text.replace(/_/g, ' ').replace(/=([0-9A-F]{2})/gi, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16))),
            'latin1',
          ).toString('utf8'),
    );
  const part = raw.split(/--[^\r\n]+\r\n/).find((chunk) => /Content-Type: text\/plain/i.test(chunk)) ?? raw;
  const split = part.indexOf('\r\n\r\n');
  const headers = part.slice(0, split);
  let body = part.slice(split + 4);
  if (/Content-Transfer-Encoding: base64/i.test(headers)) body = Buffer.from(body.replace(/\s+/g, ''), 'base64').toString('utf8');
  else if (/Content-Transfer-Encoding: quoted-printable/i.test(headers)) {
    body = Buffer.from(
      body.replace(/=\r\n/g, '').replace(/=([0-9A-F]{2})/gi, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16))),
      'latin1',
    ).toString('utf8');
  }
  return { subject, text: body.replace(/\r\n/g, '\n') };
}

describe('language files', () => {
  test('en, de, fr and es ship; every one has every key of en.json with the same placeholders', () => {
    const all = languages();
    for (const language of ['en', 'de', 'fr', 'es']) assert.ok(all.has(language), language);
    const english = all.get('en')!;
    const placeholders = (text: string) => [...text.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();
    for (const [language, dictionary] of all) {
      assert.deepEqual(Object.keys(dictionary).sort(), Object.keys(english).sort(), `${language}.json keys`);
      for (const key of Object.keys(english)) assert.deepEqual(placeholders(dictionary[key]), placeholders(english[key]), `${language} ${key}`);
      for (const key of Object.keys(english).filter((k) => k.startsWith('wallboard.'))) assert.ok(dictionary[key].length > 0);
    }
  });

  test('a locale picks its language file by language subtag; an unknown one falls back to English', () => {
    assert.equal(translator('de-AT')('report.energy'), 'Energie');
    assert.equal(translator('fr-CA')('report.cost'), 'Coût');
    assert.equal(translator('es')('wallboard.powerNow'), 'Potencia actual');
    assert.equal(translator('ja-JP')('report.energy'), 'Energy');
    assert.equal(translator('en')('report.period', { from: 'a', to: 'b' }), 'Period: a to b');
  });

  test('numbers, money and dates follow the site locale and time zone', () => {
    const de = new SiteFormat({ locale: 'de-DE', timezone: 'Europe/Berlin', currency: 'EUR' });
    assert.equal(de.kwh(48074.25).replace(/\s/g, ' '), '48.074,3 kWh');
    assert.equal(de.money(48074).replace(/\s/g, ' '), '48.074,00 €');
    assert.equal(de.dateTime('2026-10-26T18:30:00.000Z'), '26.10.2026, 19:30');
    const us = new SiteFormat({ locale: 'en-US', timezone: 'America/New_York', currency: 'USD' });
    assert.equal(us.money(48074), '$48,074.00');
    assert.match(us.dateTime('2026-10-26T18:30:00.000Z'), /^Oct 26, 2026, 2:30\sPM$/);
    assert.equal(new SiteFormat({ locale: 'not a locale!', timezone: 'UTC', currency: 'EUR' }).locale, 'en-US');
  });

  test('mail links use EMS_PUBLIC_URL, or the portal origin when only that is set', () => {
    assert.equal(mailBaseUrl('https://ems.example.test/', undefined), 'https://ems.example.test');
    assert.equal(mailBaseUrl('http://localhost:3000', 'https://portal.example.test'), 'https://portal.example.test');
    assert.equal(mailBaseUrl('https://ems.example.test', 'https://portal.example.test'), 'https://ems.example.test');
  });
});

describe('mails in the site language', () => {
  let mail: MailCatcher;
  let server: TestServer;
  let admin: TestUser;

  before(async () => {
    mail = await startMailCatcher();
    server = await startTestServer({ EMS_SMTP_URL: mail.url, EMS_MAIL_FROM: 'EMS <ems@example.test>', EMS_PUBLIC_URL: 'https://ems.werk-sued.example' });
    admin = await server.createUser({ role: 'admin' });
    const config = await server.request('PUT', '/api/configs', {
      token: admin.accessToken,
      body: { siteName: 'Werk Süd', locale: 'de-DE', timezone: 'Europe/Berlin' },
    });
    assert.equal(config.status, 200, config.text);
  });
  after(async () => {
    await server.close();
    await mail.close();
  });

  const received = (to: string) => eventually(async () => mail.messages.find((m) => m.to.includes(to))?.raw, `a mail to ${to}`, 30_000);

  test('an alert mail names the site, speaks German, shows local time and links to EMS_PUBLIC_URL', async () => {
    const rule = await server.request('POST', '/api/notification-rules', {
      token: admin.accessToken,
      body: { name: 'Leitstand', levels: ['critical'], recipients: ['leitstand@example.test'] },
    });
    assert.equal(rule.status, 201, rule.text);
    // A recent alert (older ones, read late from the gateway's history, are not mailed).
    const occurredAt = new Date(Math.floor(Date.now() / 60_000) * 60_000 - 60_000).toISOString();
    const created = await server.request('POST', '/api/alerts', {
      token: admin.accessToken,
      body: { title: 'Kältemaschine 2 gestört', level: 'critical', source: 'chiller.2', occurredAt },
    });
    assert.equal(created.status, 201, created.text);
    const { subject, text } = readMail(await received('leitstand@example.test'));
    assert.equal(subject, '[Werk Süd critical] Kältemaschine 2 gestört');
    assert.match(text, /Stufe: kritisch/);
    const local = new SiteFormat({ locale: 'de-DE', timezone: 'Europe/Berlin', currency: 'EUR' }).dateTime(occurredAt);
    assert.match(local, /^\d{2}\.\d{2}\.\d{4}, \d{2}:\d{2}$/);
    assert.ok(text.includes(`Seit: ${local} (Europe/Berlin)`), text);
    assert.ok(text.includes(`Meldung ${created.body.id}: https://ems.werk-sued.example/api/alerts/${created.body.id}`), text);
    assert.ok(text.includes('Werk Süd · https://ems.werk-sued.example'), text);
    assert.doesNotMatch(text, /localhost/);
  });

  test('a registration code mail names the site in German', async () => {
    const sent = await server.request('POST', '/api/auth/register/send-code', { body: { email: 'neu@example.test' } });
    assert.equal(sent.status, 200, sent.text);
    const { subject, text } = readMail(await received('neu@example.test'));
    assert.equal(subject, 'Ihr Registrierungscode für Werk Süd');
    assert.match(text, /^Ihr Registrierungscode für Werk Süd lautet \d{6}\.\nEr ist 5 Minuten gültig/);
    assert.ok(text.includes('https://ems.werk-sued.example'), text);
  });

  test('a report mail names the site and the period in German dates', async () => {
    const plan = await server.request('POST', '/api/reports/plans', {
      token: admin.accessToken,
      body: { name: 'Wochenbericht', templateId: 'weekly-energy', cron: '0 7 * * MON', format: 'csv', recipients: ['chef@example.test'] },
    });
    assert.equal(plan.status, 201, plan.text);
    const run = await server.request('POST', `/api/reports/plans/${plan.body.id}/run`, { token: admin.accessToken });
    assert.equal(run.status, 202, run.text);
    const { subject, text } = readMail(await received('chef@example.test'));
    const format = new SiteFormat({ locale: 'de-DE', timezone: 'Europe/Berlin', currency: 'EUR' });
    const period = `${format.date(run.body.periodFrom)} – ${format.date(new Date(Date.parse(run.body.periodTo) - 86_400_000).toISOString().slice(0, 10))}`;
    assert.equal(subject, `Wochenbericht: Werk Süd, ${period}`);
    assert.ok(text.includes(`Von EMS für den Berichtsplan "Wochenbericht" gesendet.`), text);
    assert.ok(text.includes('Werk Süd · https://ems.werk-sued.example'), text);
  });
});
