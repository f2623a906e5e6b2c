// GET /api/system/box (admin): what an admin needs of the box without a shell (issue 53): the version, the HTTPS
// certificate and its expiry (warned 30 days before), the fleet link (joined, lag, unsent rows, last error).
import crypto from 'node:crypto';
import fs from 'node:fs';
import { Type } from '@sinclair/typebox';
import { syncState } from '../../fleetSync/index.ts';
import type { Db } from '../../platform/db/client.ts';
import type { Config } from '../../platform/config.ts';
import { defineRoute } from '../../platform/http/route.ts';
import { ErrorBody, NullableTimestamp, Timestamp } from '../../platform/http/schemas.ts';
import { version } from '../../platform/packageRoot.ts';

/** A certificate this close to its end is a warning on the admin screen. */
export const CERTIFICATE_WARNING_DAYS = 30;

const BoxView = Type.Object({
  version: Type.String(),
  startedAt: Timestamp,
  https: Type.Object({
    enabled: Type.Boolean({ description: 'EMS_TLS_CERT and EMS_TLS_KEY set: the box serves HTTPS itself' }),
    subject: Type.Union([Type.String(), Type.Null()], { description: 'the certificate subject (e.g. CN=ems.plant.lan)' }),
    issuer: Type.Union([Type.String(), Type.Null()]),
    validTo: NullableTimestamp,
    daysLeft: Type.Union([Type.Integer(), Type.Null()], { description: 'whole days until it expires (negative: expired)' }),
    warning: Type.Boolean({ description: `true within ${CERTIFICATE_WARNING_DAYS} days of the expiry, or expired, or unreadable` }),
    error: Type.Union([Type.String(), Type.Null()], { description: 'why the certificate file could not be read' }),
  }),
  fleet: Type.Object({
    joined: Type.Boolean(),
    state: Type.Union([Type.Literal('off'), Type.Literal('ok'), Type.Literal('failing'), Type.Literal('refused')]),
    fleetUrl: Type.Union([Type.String(), Type.Null()]),
    lagSec: Type.Union([Type.Integer(), Type.Null()], { description: 'seconds since the last batch the fleet stored' }),
    unsentRows: Type.Integer({ minimum: 0 }),
    lastError: Type.Union([Type.String(), Type.Null()]),
  }),
});

export type BoxRouteNeeds = { db: Db; config: Config; startedAt: number };

function certificate(config: Config, now: number) {
  if (!config.tls) return { enabled: false, subject: null, issuer: null, validTo: null, daysLeft: null, warning: false, error: null };
  try {
    const cert = new crypto.X509Certificate(fs.readFileSync(config.tls.certFile));
    const validTo = new Date(cert.validTo).toISOString();
    const daysLeft = Math.floor((Date.parse(validTo) - now) / 86_400_000);
    const line = (text: string) => text.split('\n').filter(Boolean).join(', ');
    return {
      enabled: true,
      subject: line(cert.subject),
      issuer: line(cert.issuer),
      validTo,
      daysLeft,
      warning: daysLeft <= CERTIFICATE_WARNING_DAYS,
      error: null,
    };
  } catch (error) {
    return { enabled: true, subject: null, issuer: null, validTo: null, daysLeft: null, warning: true, error: (error as Error).message };
  }
}

export function boxRoutes({ db, config, startedAt }: BoxRouteNeeds) {
  return [
    defineRoute({
      method: 'GET',
      path: '/api/system/box',
      access: 'admin',
      summary: 'The box: version, the HTTPS certificate and its expiry, the fleet link',
      description: `The certificate is read from EMS_TLS_CERT at each call (a renewal reloaded by SIGHUP shows at once); warning within ${CERTIFICATE_WARNING_DAYS} days of its end. Changes nothing.`,
      tags: ['system'],
      schemas: { response: { 200: BoxView, 401: ErrorBody, 403: ErrorBody } },
      handler: () => {
        const now = Date.now();
        const link = syncState(db);
        return {
          version,
          startedAt: new Date(startedAt).toISOString(),
          https: certificate(config, now),
          fleet: {
            joined: link.state !== 'off',
            state: link.state,
            fleetUrl: link.fleetUrl,
            lagSec: link.lastSuccessAt ? Math.max(0, Math.round((now - Date.parse(link.lastSuccessAt)) / 1000)) : null,
            unsentRows: link.unsentRows,
            lastError: link.lastError,
          },
        };
      },
    }),
  ];
}
