// The access context, built once by the composition root: sign-in (AuthService), users, OAuth, the audit trail reader,
// and the sweep of spent verification codes.
import type { AuditLog } from '../platform/db/auditTrail.ts';
import type { Db } from '../platform/db/client.ts';
import type { Config } from '../platform/config.ts';
import { Repeating } from '../platform/jobs/lifecycle.ts';
import type { RouteGroups } from '../platform/http/route.ts';
import type { Module } from '../platform/jobs/module.ts';
import type { Logger } from '../platform/logger.ts';
import type { Mailer } from '../platform/mail/mailer.ts';
import { mailBaseUrl, siteMailReader, type SiteMailSettings } from '../platform/mail/siteMail.ts';
import { auditRoutes, type AuditRouteNeeds } from './audit/routes.ts';
import { AuditReader } from './audit/service.ts';
import { authRoutes, type AuthRouteNeeds } from './auth/routes.ts';
import { setupLinkRoutes, type SetupLinkRouteNeeds } from './auth/setupLinkRoutes.ts';
import { unlockUser, type LoginThrottle } from './auth/loginThrottle.ts';
import { assertPasswordLength, hashPassword, verifyPassword } from './auth/passwords.ts';
import { AuthService } from './auth/service.ts';
import { oauthRoutes, type OAuthRouteNeeds } from './oauth/routes.ts';
import { OAuthService } from './oauth/service.ts';
import { avatarRoutes, type AvatarRouteNeeds } from './users/avatarRoutes.ts';
import { userRoutes, type UserRouteNeeds } from './users/routes.ts';
import { UserDirectory } from './users/service.ts';

export type Access = { auth: AuthService; users: UserDirectory; auditTrail: AuditReader; oauth: OAuthService };

export type AccessNeeds = {
  /** The site's name, locale, zone and currency for the mails (site's settings, a port: access is built before site). */
  siteSettings: SiteMailSettings;
  config: Config;
  db: Db;
  audit: AuditLog;
  logger: Logger;
  mailer: Mailer;
  /** The users' pictures (files builds the store; access serves /api/users/:id/avatar). */
  avatars: AvatarRouteNeeds['avatars'];
};

export type AccessRouteNeeds = AuthRouteNeeds & SetupLinkRouteNeeds & OAuthRouteNeeds & UserRouteNeeds & AuditRouteNeeds & AvatarRouteNeeds;

/** The access context's route tables: sign-in, OAuth, users, the audit trail, avatars. */
export function accessRouteGroups(needs: AccessRouteNeeds): RouteGroups {
  return {
    auth: [...authRoutes(needs), ...setupLinkRoutes(needs)],
    oauth: oauthRoutes(needs),
    users: userRoutes(needs),
    audit: auditRoutes(needs),
    avatars: avatarRoutes(needs),
  };
}

/** The user service with auth's hashing and sign-in throttle wired in (users does not import auth); emsctl builds it too. */
export function buildUserDirectory({
  db,
  audit,
  dataDir,
  logger,
  throttle,
}: {
  db: Db;
  audit: AuditLog;
  dataDir: string;
  logger: Logger;
  throttle: Pick<LoginThrottle, 'reserve'>;
}): UserDirectory {
  return new UserDirectory({
    db,
    audit,
    dataDir,
    logger,
    passwords: { hash: hashPassword, verify: verifyPassword, assertLength: assertPasswordLength },
    throttle: {
      reserve: (userId, login, address) => throttle.reserve(userId, login, address),
      unlock: (user) => unlockUser(db, user),
    },
  });
}

export function buildAccess({ config, db, audit, logger, mailer, avatars, siteSettings }: AccessNeeds): Module<Access> {
  const auth = new AuthService({
    db,
    logger,
    mailer,
    jwtSecret: config.jwtSecret,
    accessTokenTtlSec: config.accessTokenTtlSec,
    refreshTokenTtlSec: config.refreshTokenTtlSec,
    codeTtlSec: config.codeTtlSec,
    siteMail: siteMailReader(siteSettings, mailBaseUrl(config.publicUrl, config.portalOrigin)),
  });
  const users = buildUserDirectory({ db, audit, dataDir: config.dataDir, logger, throttle: auth.throttle });
  const sweep = new Repeating(async () => auth.codes.sweep(), 60_000, 'verification code sweep');
  const services = { auth, users, auditTrail: new AuditReader(db), oauth: new OAuthService({ config, db, logger, auth, audit }) };
  return {
    context: 'access',
    services,
    running: [{ name: 'code sweeper', start: () => sweep.start(), jobs: [sweep], stop: () => sweep.stop() }],
    routes: accessRouteGroups({ ...services, config, avatars, db, audit }),
  };
}
