// What emsctl uses of access/ (emsctl user …, secret rotate, tokens revoke-all): the signing secret, refresh tokens,
// the sign-in throttle, passwords and the user service's types. A face beside index.ts, for emsctl only, loaded lazily
// by a command (the user commands build the user service through index.ts; docs/development.md, importGraph.test.ts).
export { LoginThrottle } from './auth/loginThrottle.ts';
export { assertPasswordLength } from './auth/passwords.ts';
export { RefreshTokens } from './auth/refreshTokens.ts';
export { rotateStoredSecret } from './auth/signingKeys.ts';
export type { UserView } from './users/schemas.ts';
export { generatePassword, type Caller, type UserDirectory } from './users/service.ts';
