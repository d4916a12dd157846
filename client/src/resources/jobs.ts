import { type Http, type IdempotentRequestOptions, pageQuery, unwrap } from '../http.js';
import { ListPromise } from '../pagination.js';
import type { RequestOptions } from '../transport.js';
import type { ApproveJobParams, DeclineJobParams, Job, JobList, ListJobsParams } from '../types.js';

/** `/v1/jobs`: work the calls created, decided at a `version` so that of two decisions one wins. */
export class Jobs {
  constructor(private readonly http: Http) {}

  /** Newest first; by `status`, or by time with `created_after`, `created_before`, `updated_after`. */
  list(params: ListJobsParams = {}, options?: RequestOptions): ListPromise<Job, JobList> {
    return new ListPromise((cursor) =>
      unwrap(
        this.http.api.GET('/v1/jobs', { params: { query: pageQuery(params, cursor) }, ...this.http.via(options) }),
      ),
    );
  }

  retrieve(id: string, options?: RequestOptions): Promise<Job> {
    return unwrap(this.http.api.GET('/v1/jobs/{id}', { params: { path: { id } }, ...this.http.via(options) }));
  }

  /** A ConflictError with `code` `version_conflict` (and `currentVersion`) or `invalid_state` when it lost. */
  approve(id: string, params: ApproveJobParams, options?: IdempotentRequestOptions): Promise<Job> {
    const header = this.http.idempotency(options);
    return unwrap(
      this.http.api.POST('/v1/jobs/{id}/approve', {
        params: { path: { id }, header },
        body: params,
        ...this.http.via(options),
      }),
    );
  }

  decline(id: string, params: DeclineJobParams, options?: IdempotentRequestOptions): Promise<Job> {
    const header = this.http.idempotency(options);
    return unwrap(
      this.http.api.POST('/v1/jobs/{id}/decline', {
        params: { path: { id }, header },
        body: params,
        ...this.http.via(options),
      }),
    );
  }
}
