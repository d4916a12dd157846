import { type Http, pageQuery, unwrap } from '../http.js';
import { ListPromise } from '../pagination.js';
import type { RequestOptions } from '../transport.js';
import type { Call, CallList, CallSummary, ListCallsParams, Transcript } from '../types.js';

/** `/v1/calls`: what the assistant answered (scopes `calls:read`, `transcripts:read` for transcripts). */
export class Calls {
  constructor(private readonly http: Http) {}

  /** Newest first; `created_after`/`created_before` bound it in time. */
  list(params: ListCallsParams = {}, options?: RequestOptions): ListPromise<Call, CallList> {
    return new ListPromise((cursor) =>
      unwrap(
        this.http.api.GET('/v1/calls', { params: { query: pageQuery(params, cursor) }, ...this.http.via(options) }),
      ),
    );
  }

  retrieve(id: string, options?: RequestOptions): Promise<Call> {
    return unwrap(this.http.api.GET('/v1/calls/{id}', { params: { path: { id } }, ...this.http.via(options) }));
  }

  /** Who said what, turn by turn; a NotFoundError until the call has one. */
  transcript(id: string, options?: RequestOptions): Promise<Transcript> {
    return unwrap(
      this.http.api.GET('/v1/calls/{id}/transcript', { params: { path: { id } }, ...this.http.via(options) }),
    );
  }

  /** The call's outcome and details; a NotFoundError until the call has one. */
  summary(id: string, options?: RequestOptions): Promise<CallSummary> {
    return unwrap(this.http.api.GET('/v1/calls/{id}/summary', { params: { path: { id } }, ...this.http.via(options) }));
  }
}
