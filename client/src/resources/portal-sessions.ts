import { type Http, type IdempotentRequestOptions, pageQuery, unwrap } from '../http.js';
import { ListPromise } from '../pagination.js';
import type { RequestOptions } from '../transport.js';
import type {
  CreatePortalSessionParams,
  DeletedPortalSession,
  ListPortalSessionsParams,
  PortalSession,
  PortalSessionList,
  PortalSessionWithToken,
} from '../types.js';

/** `/v1/portal-sessions`: links to the webhook portal that need no API key (scope `webhooks:write`). */
export class PortalSessions {
  constructor(private readonly http: Http) {}

  /** The answer holds the token and its URL, shown this once. */
  create(params: CreatePortalSessionParams = {}, options?: IdempotentRequestOptions): Promise<PortalSessionWithToken> {
    const header = this.http.idempotency(options);
    return unwrap(
      this.http.api.POST('/v1/portal-sessions', { params: { header }, body: params, ...this.http.via(options) }),
    );
  }

  /** The shop's live sessions, never their tokens. */
  list(params: ListPortalSessionsParams = {}, options?: RequestOptions): ListPromise<PortalSession, PortalSessionList> {
    return new ListPromise((cursor) =>
      unwrap(
        this.http.api.GET('/v1/portal-sessions', {
          params: { query: pageQuery(params, cursor) },
          ...this.http.via(options),
        }),
      ),
    );
  }

  /** Ends the session: its token stops working at once. Not retried once sent (a repeat would be a 404). */
  del(id: string, options?: RequestOptions): Promise<DeletedPortalSession> {
    return unwrap(
      this.http.api.DELETE('/v1/portal-sessions/{id}', { params: { path: { id } }, ...this.http.via(options) }),
    );
  }
}
