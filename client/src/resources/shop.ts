import { type Http, type IdempotentRequestOptions, unwrap } from '../http.js';
import type { RequestOptions } from '../transport.js';
import type { KeyProfile, Shop, UpdateShopParams } from '../types.js';

/** `/v1/shop`: the shop's settings (scopes `settings:read`, `settings:write`). */
export class ShopResource {
  constructor(private readonly http: Http) {}

  retrieve(options?: RequestOptions): Promise<Shop> {
    return unwrap(this.http.api.GET('/v1/shop', this.http.via(options)));
  }

  /** Any subset of the settings; days left out of `hours` keep theirs. Returns the whole shop. */
  update(params: UpdateShopParams, options?: IdempotentRequestOptions): Promise<Shop> {
    const header = this.http.idempotency(options);
    return unwrap(this.http.api.PATCH('/v1/shop', { params: { header }, body: params, ...this.http.via(options) }));
  }
}

/** `/v1/me`: the calling key, its shop, scopes and mode. */
export class Me {
  constructor(private readonly http: Http) {}

  retrieve(options?: RequestOptions): Promise<KeyProfile> {
    return unwrap(this.http.api.GET('/v1/me', this.http.via(options)));
  }
}
