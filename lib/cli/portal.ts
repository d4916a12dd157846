import * as z from 'zod/mini';
import {
  createPortalSession,
  deletePortalSession,
  listPortalSessions,
  type PortalSessionDeps,
} from '../../shared/domain/portal-sessions';
import { createPortalSessionBody } from '../../shared/domain/portal-sessions-schema';
import type { Resource } from '../../shared/domain/resources';
import type { Shop } from '../../shared/domain/shop';
import { AppError } from '../../shared/errors';
import type { ApiDeps } from '../../shared/wiring/api';

export interface PortalOpenOptions {
  readOnly: boolean;
  expiresIn: string | boolean | undefined;
  mode: string | boolean | undefined;
  apiUrl: string;
}

/**
 * `portal open`: a portal session made by an operator, as POST /v1/portal-sessions makes one
 * for a key (same rules, same record), with the link to hand to the shop's IT person.
 * A bad option is a RangeError (the CLI's usage error), before anything is written.
 */
export async function portalOpen(deps: ApiDeps, shop: Shop, opts: PortalOpenOptions) {
  const expiresIn = opts.expiresIn === undefined ? undefined : Number(opts.expiresIn);
  // The API's own rule, so the CLI and POST /v1/portal-sessions never disagree.
  const checked = z.safeParse(createPortalSessionBody, { expires_in: expiresIn });
  if (!checked.success) throw new RangeError(`--expires-in ${checked.error.issues[0]?.message ?? 'is not valid'}`);
  const mode = opts.mode ?? 'test';
  if (mode !== 'test' && mode !== 'live') throw new RangeError('--mode must be test or live');
  let base: URL;
  try {
    base = new URL(opts.apiUrl);
  } catch {
    throw new RangeError(`--api-url '${opts.apiUrl}' is not a URL`);
  }
  if (base.protocol !== 'https:' && base.protocol !== 'http:')
    throw new RangeError(`--api-url '${opts.apiUrl}' is not an http(s) URL`);
  return createPortalSession(
    deps,
    { shopId: shop.id, mode, key: null },
    { expires_in: expiresIn, read_only: opts.readOnly },
    `${base.origin}${base.pathname}`,
  );
}

type ListDeps = Parameters<typeof listPortalSessions>[0];

/** `portal list`: the shop's live sessions, newest first, as GET /v1/portal-sessions lists them (every page). */
export async function portalList(deps: ListDeps, shopId: string): Promise<Resource<'portalSession'>[]> {
  const sessions: Resource<'portalSession'>[] = [];
  let after: Record<string, unknown> | undefined;
  do {
    const page = await listPortalSessions(deps, shopId, { limit: 100, after });
    sessions.push(...page.items);
    after = page.next;
  } while (after);
  return sessions;
}

/**
 * `portal revoke`: ends the shop's session of that id, as DELETE /v1/portal-sessions/{id} does
 * (its token is refused from its next request), or every live one with `'all'`. Answers the
 * ids it ended; an id the shop has no live session of is a RangeError (the CLI's usage error).
 */
export async function portalRevoke(
  deps: ListDeps & Pick<PortalSessionDeps, 'portalSessions' | 'now'>,
  shopId: string,
  which: { id: string } | 'all',
): Promise<string[]> {
  if (which !== 'all') {
    try {
      await deletePortalSession(deps, shopId, which.id);
    } catch (err) {
      if (err instanceof AppError && err.code === 'resource_missing')
        throw new RangeError(`No such portal session: ${which.id}`, { cause: err });
      throw err;
    }
    return [which.id];
  }
  const ended: string[] = [];
  for (const session of await portalList(deps, shopId)) {
    // One deleted meanwhile (by DELETE or another operator) has ended already.
    if (await deps.portalSessions.revoke(shopId, session.id, deps.now().toISOString())) ended.push(session.id);
  }
  return ended;
}
