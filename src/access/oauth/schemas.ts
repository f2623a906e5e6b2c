// Request and response shapes of provider sign-in, binding and the per-user link list (DESIGN.md "OAuth sign-in").
import { Type, type Static } from '@sinclair/typebox';
import { Email, PageQuery, Page, Timestamp } from '../../platform/http/schemas.ts';
import { User, Username } from '../users/schemas.ts';

export const PROVIDER_NAMES = ['github', 'oidc'] as const;
export type ProviderName = (typeof PROVIDER_NAMES)[number];

/** Any string: an unknown or unconfigured provider is a 404 from the service, not a validation error. */
export const ProviderParams = Type.Object({ provider: Type.String({ minLength: 1, maxLength: 32 }) });

export const ProviderList = Type.Object({
  providers: Type.Array(Type.Object({ name: Type.Union(PROVIDER_NAMES.map((name) => Type.Literal(name))), displayName: Type.String() })),
});

export const AuthorizeUrl = Type.Object({ url: Type.String({ description: 'open this in the sign-in popup' }) });

/** What the provider sends back to the redirect URI, as query (GET) or urlencoded form (POST). */
export const CallbackParams = Type.Object({
  code: Type.Optional(Type.String({ maxLength: 2048 })),
  state: Type.Optional(Type.String({ maxLength: 256 })),
  iss: Type.Optional(Type.String({ maxLength: 2048 })),
  error: Type.Optional(Type.String({ maxLength: 256 })),
  error_description: Type.Optional(Type.String({ maxLength: 1024 })),
});

export const ProviderProfile = Type.Object({
  provider: Type.Union(PROVIDER_NAMES.map((name) => Type.Literal(name))),
  providerUserId: Type.String(),
  username: Type.Optional(Type.String({ description: 'a suggestion that already fits the username rules' })),
  email: Type.Optional(Type.String()),
  name: Type.Optional(Type.String()),
});
export type ProviderProfile = Static<typeof ProviderProfile>;

const SignedInFields = { accessToken: Type.String(), refreshToken: Type.String(), user: User };

export const LinkedOutcome = Type.Object({ status: Type.Literal('linked'), ...SignedInFields });
export const BindRequiredOutcome = Type.Object({
  status: Type.Literal('bind_required'),
  bindToken: Type.String({ description: 'single use, valid 10 minutes' }),
  profile: ProviderProfile,
});
export const CallbackOutcome = Type.Union([LinkedOutcome, BindRequiredOutcome]);
export type CallbackOutcome = Static<typeof CallbackOutcome>;

export const SignedIn = Type.Object(SignedInFields);

export const BindToken = Type.String({ minLength: 1, maxLength: 128 });

export const BindBody = Type.Object({
  bindToken: BindToken,
  username: Type.String({ minLength: 1, maxLength: 254, description: 'username or email of the existing account' }),
  password: Type.String({ minLength: 1, maxLength: 1024 }),
});

export const RegisterAndBindBody = Type.Object({
  bindToken: BindToken,
  username: Type.Optional(Username),
  email: Type.Optional(Email),
});

export const OAuthLink = Type.Object({
  provider: Type.String(),
  providerUserId: Type.String(),
  createdAt: Timestamp,
});
export type OAuthLinkView = Static<typeof OAuthLink>;

export const LinkListQuery = Type.Object(PageQuery);
export const LinkPage = Page(OAuthLink);

export const UserLinkParams = Type.Object({ id: Type.Integer({ minimum: 1 }) });
export const UserProviderParams = Type.Object({ id: Type.Integer({ minimum: 1 }), provider: Type.String({ minLength: 1, maxLength: 32 }) });
