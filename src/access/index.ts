// The face of access/: what the other contexts use of it. Imports from outside access/ come through this file
// (test/structure/importGraph.test.ts); what is not listed here is access's own business.
export { AuditReader } from './audit/service.ts';
export { MAX_FAILURES_PER_ADDRESS, MAX_FAILURES_PER_USER, unlockUser, WINDOW_MS, type LoginThrottle } from './auth/loginThrottle.ts';
export { assertPasswordLength, hashPassword, verifyPassword } from './auth/passwords.ts';
export { AuthService } from './auth/service.ts';
export { OAuthService } from './oauth/service.ts';
export { avatarColumns } from './users/avatarColumns.ts';
export { OidcProvider } from './oauth/oidc.ts';
export { NullableString, Username } from './users/schemas.ts';
export { UserDirectory, ensureInitialAdmin } from './users/service.ts';
export { accessRouteGroups, buildAccess, buildUserDirectory, type Access, type AccessNeeds } from './module.ts';
