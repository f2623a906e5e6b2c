// The query of the fleet's paged lists, read and checked once (src/fleet/app.ts hands it to the route handlers).
import { FleetError } from './errors.ts';

/** A paged list's query as checked: the page, its size, whether resolved alerts are listed, one site's row only. */
export type ListQuery = { page: number; pageSize: number; includeResolved: boolean; site?: string };

/** The largest page any list answers (a page is one request's work, whatever the fleet's size). */
export const MAX_PAGE_SIZE = 500;

/**
 * The query of a paged list (health, EUI ranking, alerts): `page` (from 1) and `pageSize` (1..MAX_PAGE_SIZE, default
 * `defaultSize`), `site` (one site's row only, a UUID) where `allowed` names it, `status` (`open` or `all`) on the alert
 * list. Anything else, or a value out of range, is a 400 naming the field (`details.field`).
 */
export function listQuery(query: Record<string, unknown>, allowed: ReadonlyArray<'site' | 'status'> = [], defaultSize = 50): ListQuery {
  const refuse = (field: string, message: string): never => {
    throw new FleetError('invalid_request', `${field} ${message}`, { details: { field } });
  };
  for (const [field, value] of Object.entries(query)) {
    if (!['page', 'pageSize', ...allowed].includes(field))
      refuse(field, `is not a parameter of this list (page, pageSize${allowed.map((a) => `, ${a}`).join('')})`);
    if (typeof value !== 'string') refuse(field, 'is given more than once');
  }
  const integer = (field: string, fallback: number, max: number) => {
    const text = query[field] as string | undefined;
    if (text === undefined) return fallback;
    if (!/^[0-9]{1,7}$/.test(text) || Number(text) < 1 || Number(text) > max) refuse(field, `must be an integer from 1 to ${max}`);
    return Number(text);
  };
  const site = query.site as string | undefined;
  if (site !== undefined && !/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(site)) refuse('site', 'must be a site id (UUID)');
  const status = query.status as string | undefined;
  if (status !== undefined && status !== 'open' && status !== 'all') refuse('status', 'must be open or all');
  return {
    page: integer('page', 1, 100_000),
    pageSize: integer('pageSize', defaultSize, MAX_PAGE_SIZE),
    includeResolved: status === 'all',
    ...(site ? { site } : {}),
  };
}
