// Example answers of sign-in and GET /api/auth/me (issue 45 item 14). The tokens are not real: an access token is a JWT,
// a refresh token 32 random bytes in base64.

export const ME_EXAMPLE = {
  id: 2,
  username: 'operator1',
  email: 'operator1@example.com',
  role: 'operator',
  displayName: 'Olivia Operator',
  phone: null,
  avatarUrl: null,
  lastLoginAt: '2026-01-14T07:58:12.331Z',
  mustChangePassword: false,
  language: 'de',
  theme: null,
  createdAt: '2026-01-05T10:02:00.000Z',
  updatedAt: '2026-01-05T10:02:00.000Z',
};

export const LOGIN_EXAMPLE = {
  accessToken: 'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJleGFtcGxlIjoibm90IGEgcmVhbCB0b2tlbiJ9.ZXhhbXBsZS1zaWduYXR1cmU',
  refreshToken: 'ZXhhbXBsZSByZWZyZXNoIHRva2VuIC0gbm90IHJlYWw=',
  user: ME_EXAMPLE,
};
