import * as z from 'zod/mini';
import { createPortalSession } from '../../shared/domain/portal-sessions';
import { createPortalSessionBody } from '../../shared/domain/portal-sessions-schema';
import type { Shop } from '../../shared/domain/shop';
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
