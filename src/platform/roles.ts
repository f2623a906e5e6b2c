// The roles, lowest first: a domain fact shared by the route layer (access checks) and the schema (the role column).
export const ROLES = ['viewer', 'operator', 'admin'] as const;
export type Role = (typeof ROLES)[number];
