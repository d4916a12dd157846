import { randomUUID } from 'node:crypto';
import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { invoke } from '../lib/local/invocations';
import { lambdaContext } from '../lib/local/lambda-events';
import { routes } from '../shared/routes';
import { apiEvent, principal } from '../test/helpers/events';
import { Killed, type Steps } from './steps';
import type { World } from './world';

type Handler = (event: unknown, context: unknown) => Promise<APIGatewayProxyStructuredResultV2>;

/** What the run asked of the API, when, and what it answered. */
export interface ApiCall {
  operation: string;
  endpoint?: string;
  start: number;
  end: number;
  status: number;
  params: Record<string, string>;
  request?: Record<string, unknown>;
  body: Record<string, unknown>;
}

/** The API's operations as the HTTP API invokes them (after the authorizer), found through the route table. */
export class SimApi {
  readonly calls: ApiCall[] = [];
  private readonly handlers = new Map<string, Promise<Handler>>();

  constructor(
    private readonly steps: Steps,
    private readonly world: World,
    private readonly shopId: string,
  ) {}

  private handler(file: string): Promise<Handler> {
    let h = this.handlers.get(file);
    if (!h) {
      // Loading the handler's module is real input/output (tsx's loader, the file system), and takes real time:
      // through `io`, so the driver waits for it before it releases a step or fires a timer. Not waited for, the
      // call's first gate would come whenever the load ends: before or after another step's, or after the next timer.
      h = this.steps
        .io(() => import(`../${file.replace(/\.ts$/, '')}`))
        .then((mod: { makeHandler(deps: () => unknown): Handler }) => mod.makeHandler(() => this.world.deps));
      this.handlers.set(file, h);
    }
    return h;
  }

  /** Calls `operation`; with `gated` false (setup), outside the scheduler. */
  async call(
    operation: string,
    params: Record<string, string> = {},
    body?: object,
    opts: { gated?: boolean; endpoint?: string } = {},
  ): Promise<ApiCall> {
    const route = routes.find((r) => r.operationId === operation);
    if (!route?.handler) throw new Error(`no operation ${operation}`);
    const handler = await this.handler(route.handler);
    const event = apiEvent({
      method: route.method,
      path: route.path.replace(/\{(\w+)\}/g, (_, k: string) => params[k] ?? ''),
      pathParameters: params,
      ...(body ? { body: JSON.stringify(body) } : {}),
      headers: route.idempotent ? { 'idempotency-key': randomUUID() } : {},
      principal: principal({ shopId: this.shopId }),
    });
    const start = this.steps.clock.now();
    const run = () =>
      invoke(handler, event, lambdaContext(operation, randomUUID())) as Promise<APIGatewayProxyStructuredResultV2>;
    const out =
      opts.gated === false ? await run() : await this.steps.invoke(`api ${operation}`, run, { faults: false });
    if (out instanceof Killed) throw new Error('an API call was killed');
    const call: ApiCall = {
      operation,
      ...(opts.endpoint ? { endpoint: opts.endpoint } : {}),
      start,
      end: this.steps.clock.now(),
      params,
      ...(body ? { request: body as Record<string, unknown> } : {}),
      status: out.statusCode ?? 0,
      body: out.body ? (JSON.parse(out.body) as Record<string, unknown>) : {},
    };
    this.calls.push(call);
    if (opts.gated !== false) this.steps.log(`api ${operation} ${opts.endpoint ?? ''} -> ${call.status}`);
    return call;
  }
}
