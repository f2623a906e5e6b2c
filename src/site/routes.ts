// /api/configs (platform settings) and /api/three-d-config (the 3D scene): everyone signed in reads, admins write.
import type { ConfigStore } from './service.ts';
import { defineRoute } from '../platform/http/route.ts';
import { ErrorBody } from '../platform/http/schemas.ts';
import type { Mailer } from '../platform/mail/mailer.ts';
import { MailState, PlatformConfigAnswer, PlatformConfigUpdate, TestMailBody, TestMailOutcome, ThreeDConfig, ThreeDConfigUpdate } from './schemas.ts';
import { sendTestMail } from './testMail.ts';

const tags = ['configs'];

export type ConfigRouteNeeds = { configs: ConfigStore; mailer: Mailer };

export function configRoutes({ configs: store, mailer }: ConfigRouteNeeds) {
  return [
    defineRoute({
      method: 'GET',
      path: '/api/configs',
      access: 'viewer',
      summary: 'The platform configuration',
      description:
        'Site name, logo, time zone, locale, currency, electricity price, carbon factor and refresh interval, and the electricity price in force today (priceInForce: the set-up price or a tariff). Changes nothing.',
      tags,
      schemas: { response: { 200: PlatformConfigAnswer } },
      handler: () => ({ ...store.platform(), priceInForce: store.priceInForce() }),
    }),
    defineRoute({
      method: 'PUT',
      path: '/api/configs',
      access: 'admin',
      summary: 'Update the platform configuration (partial)',
      example: { siteName: 'HQ Berlin', timezone: 'Europe/Berlin', currency: 'EUR', electricityPrice: 0.28 },
      description:
        "timezone must be an IANA zone, locale a BCP 47 tag (stored in canonical form), currency an ISO 4217 code. A new timezone re-keys the stored energy into the new zone's days before the answer (every interval keeps its time; collection waits meanwhile). " +
        "electricityPrice prices: while the site has no electricity tariff of its own it becomes the tariff from today (a version from today, or today's set-up version repriced; today's stored costs restated, audited); once an admin has entered a tariff version it prices only hand-entered area cards. priceInForce says which.",
      tags,
      schemas: { body: PlatformConfigUpdate, response: { 200: PlatformConfigAnswer, 400: ErrorBody } },
      handler: async ({ body, user }) => ({ ...(await store.updatePlatform(user, body)), priceInForce: store.priceInForce() }),
    }),
    defineRoute({
      method: 'GET',
      path: '/api/configs/mail',
      access: 'admin',
      summary: 'Whether mail leaves the box',
      description:
        'smtpConfigured: EMS_SMTP_URL is set, so report mails and sign-in codes go to that mail server; false: they are written to the service log only. Changes nothing.',
      tags,
      schemas: { response: { 200: MailState } },
      handler: () => ({ smtpConfigured: mailer.delivers !== false }),
    }),
    defineRoute({
      method: 'POST',
      path: '/api/configs/test-mail',
      access: 'admin',
      summary: 'Send a test mail and say what became of it',
      example: {},
      description:
        'Sends one short message to `to` (default: your own email) through the configured mail transport, once, without retries. ' +
        'delivery is sent (the mail server took it), logged (EMS_SMTP_URL is not set: it was written to the service log only and nobody received it) ' +
        "or failed (error is the mail server's answer). smtpConfigured says whether EMS_SMTP_URL is set.",
      tags,
      schemas: { body: TestMailBody, response: { 200: TestMailOutcome, 400: ErrorBody } },
      handler: ({ body, user }) => sendTestMail(mailer, store.platform().siteName, body.to ?? user.email),
    }),
    defineRoute({
      method: 'GET',
      path: '/api/three-d-config',
      access: 'viewer',
      summary: 'The 3D scene configuration',
      description: 'Camera preset, lighting, hotspots, labels and the model file of the 3D scene. Changes nothing.',
      tags,
      schemas: { response: { 200: ThreeDConfig } },
      handler: () => store.threeD(),
    }),
    defineRoute({
      method: 'PUT',
      path: '/api/three-d-config',
      access: 'admin',
      summary: 'Update the 3D scene configuration (partial)',
      example: { ambientIntensity: 0.6, hotspots: [{ id: 'chiller-2', name: 'Chiller 2', position: { x: 12, y: 0, z: -4 }, pointCode: 'temp.chw.supply' }] },
      description: 'Hotspot and label ids must be unique within their list; modelFileId must name an uploaded model file.',
      tags,
      schemas: { body: ThreeDConfigUpdate, response: { 200: ThreeDConfig, 400: ErrorBody } },
      handler: ({ body, user }) => store.updateThreeD(user, body),
    }),
  ];
}
