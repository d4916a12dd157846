import { type Http, type IdempotentRequestOptions, pageQuery, unwrap, wholeList } from '../http.js';
import { ListPromise } from '../pagination.js';
import type { RequestOptions } from '../transport.js';
import type {
  CreateWebhookEndpointParams,
  DeletedWebhookEndpoint,
  Delivery,
  DeliveryList,
  Event,
  ListDeliveriesParams,
  Recovery,
  RecoverWebhookEndpointParams,
  UpdateWebhookEndpointParams,
  WebhookEndpoint,
  WebhookEndpointList,
  WebhookEndpointStats,
  WebhookEndpointWithSecret,
} from '../types.js';

/**
 * `/v1/webhook-endpoints`: where the shop's events are delivered. Writes the API takes no
 * Idempotency-Key on (update, del, test) are not retried once they may have reached it.
 */
export class WebhookEndpoints {
  constructor(private readonly http: Http) {}

  /** The answer carries the endpoint's `secret`, shown this once: store it before anything else. */
  create(params: CreateWebhookEndpointParams, options?: IdempotentRequestOptions): Promise<WebhookEndpointWithSecret> {
    const header = this.http.idempotency(options);
    return unwrap(
      this.http.api.POST('/v1/webhook-endpoints', { params: { header }, body: params, ...this.http.via(options) }),
    );
  }

  /** Every endpoint at once (a shop has at most 16). */
  list(options?: RequestOptions): ListPromise<WebhookEndpoint, WebhookEndpointList> {
    return new ListPromise(wholeList(() => unwrap(this.http.api.GET('/v1/webhook-endpoints', this.http.via(options)))));
  }

  retrieve(id: string, options?: RequestOptions): Promise<WebhookEndpoint> {
    return unwrap(
      this.http.api.GET('/v1/webhook-endpoints/{id}', { params: { path: { id } }, ...this.http.via(options) }),
    );
  }

  /** `enabled: true` clears `disabled_reason` and `failing_since`. */
  update(id: string, params: UpdateWebhookEndpointParams, options?: RequestOptions): Promise<WebhookEndpoint> {
    const init = { params: { path: { id } }, body: params, ...this.http.via(options) };
    return unwrap(this.http.api.PATCH('/v1/webhook-endpoints/{id}', init));
  }

  /** Open deliveries become `cancelled` and the secrets are destroyed; a second call is a NotFoundError. */
  del(id: string, options?: RequestOptions): Promise<DeletedWebhookEndpoint> {
    return unwrap(
      this.http.api.DELETE('/v1/webhook-endpoints/{id}', { params: { path: { id } }, ...this.http.via(options) }),
    );
  }

  /** A new secret; the previous ones keep signing for 24 hours, so receivers can switch without a gap. */
  rotateSecret(id: string, options?: IdempotentRequestOptions): Promise<WebhookEndpointWithSecret> {
    const init = { params: { path: { id }, header: this.http.idempotency(options) }, ...this.http.via(options) };
    return unwrap(this.http.api.POST('/v1/webhook-endpoints/{id}/rotate-secret', init));
  }

  /** Queues a `webhook_endpoint.test` event for this endpoint alone, whatever its filter. */
  test(id: string, options?: RequestOptions): Promise<Event> {
    const init = { params: { path: { id } }, ...this.http.via(options) };
    return unwrap(this.http.api.POST('/v1/webhook-endpoints/{id}/test', init));
  }

  /** Newest first, each with its attempts; by `status`. A page may be short, even empty, before the end. */
  listDeliveries(
    id: string,
    params: ListDeliveriesParams = {},
    options?: RequestOptions,
  ): ListPromise<Delivery, DeliveryList> {
    return new ListPromise((cursor) => {
      const init = { params: { path: { id }, query: pageQuery(params, cursor) }, ...this.http.via(options) };
      return unwrap(this.http.api.GET('/v1/webhook-endpoints/{id}/deliveries', init));
    });
  }

  /** The last 24 hours: attempts, success rate, latency, open deliveries. */
  stats(id: string, options?: RequestOptions): Promise<WebhookEndpointStats> {
    const init = { params: { path: { id } }, ...this.http.via(options) };
    return unwrap(this.http.api.GET('/v1/webhook-endpoints/{id}/stats', init));
  }

  /** Sends again every event of the window that this endpoint has not received. */
  recover(id: string, params: RecoverWebhookEndpointParams, options?: IdempotentRequestOptions): Promise<Recovery> {
    const init = {
      params: { path: { id }, header: this.http.idempotency(options) },
      body: params,
      ...this.http.via(options),
    };
    return unwrap(this.http.api.POST('/v1/webhook-endpoints/{id}/recover', init));
  }

  /** A recovery's progress. */
  retrieveRecovery(id: string, recoveryId: string, options?: RequestOptions): Promise<Recovery> {
    const init = { params: { path: { id, recovery_id: recoveryId } }, ...this.http.via(options) };
    return unwrap(this.http.api.GET('/v1/webhook-endpoints/{id}/recoveries/{recovery_id}', init));
  }
}
