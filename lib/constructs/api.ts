import { Duration, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import type { CfnAuthorizer, CfnStage } from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpApi, HttpMethod, HttpStage } from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpLambdaAuthorizer, HttpLambdaResponseType } from 'aws-cdk-lib/aws-apigatewayv2-authorizers';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import type { ITableV2 } from 'aws-cdk-lib/aws-dynamodb';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import { ParamsAndSecretsLayerVersion, ParamsAndSecretsVersions } from 'aws-cdk-lib/aws-lambda';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { Construct } from 'constructs';
import { RATE_PK_PREFIX } from '../../shared/store/keys';
import { portalRoute, routes } from '../../shared/routes';
import type { ServiceConfig } from '../config';
import { FUNCTION_TABLE_PARTS, PIPELINE_FUNCTIONS } from './entries';
import { ServiceFunction } from './function';
import { grantSealSecrets } from './secrets-key';

/** What every function of the API is given. */
type Common = { logRetention: RetentionDays; logLevel: ServiceConfig['logLevel']; sourceMaps: boolean };

export interface ApiProps {
  table: ITableV2;
  secretsKey: IKey;
  cursorSecret: ISecret;
  config: ServiceConfig;
  logRetention: RetentionDays;
}

/**
 * The public API: an HTTP API whose routes come from shared/routes.ts, one function each,
 * all behind one Lambda authorizer, which runs on every request (uncached): it checks the
 * key and its rate limit (docs/rate-limits.md), so a revoked key is refused at once.
 */
export class Api extends Construct {
  readonly httpApi: HttpApi;
  readonly stage: HttpStage;
  readonly functions: ServiceFunction[] = [];

  constructor(scope: Construct, id: string, props: ApiProps) {
    super(scope, id);
    const common: Common = {
      logRetention: props.logRetention,
      logLevel: props.config.logLevel,
      sourceMaps: props.config.sourceMaps,
    };
    const authorizerFn = this.#authorizerFunction(props, common);
    const fallbackFn = new ServiceFunction(this, 'Fallback', {
      ...common,
      entry: PIPELINE_FUNCTIONS.Fallback,
      description: '$default: 404/405 in the contract format',
    });
    this.functions.push(authorizerFn, fallbackFn);

    // No result cache: the authorizer counts every request against its key's limit, and with
    // no identity source a request without Authorization still reaches it (the contract's 401).
    const authorizer = new HttpLambdaAuthorizer('KeyAuthorizer', authorizerFn, {
      responseTypes: [HttpLambdaResponseType.SIMPLE],
      resultsCacheTtl: Duration.seconds(0),
    });

    this.httpApi = new HttpApi(this, 'Http', {
      description: 'Shop call-handling API (/v1)',
      createDefaultStage: false,
      // Unmatched requests reach the fallback, which answers in the contract's error format.
      defaultIntegration: new HttpLambdaIntegration('FallbackIntegration', fallbackFn),
    });

    this.#operations(props, common, authorizer);
    // Uncached, API Gateway needs no identity source, and without one it never answers 401 itself.
    const cfnAuthorizer = this.httpApi.node.findChild('KeyAuthorizer').node.defaultChild as CfnAuthorizer;
    cfnAuthorizer.addPropertyDeletionOverride('IdentitySource');

    Validations.of(this.httpApi).acknowledge({
      id: 'AwsSolutions-APIG4',
      reason:
        'Only $default and GET/HEAD /portal(/{file}) are unauthenticated: the fallback answers ' +
        '404/405 and the portal serves fixed static files; neither reads any data.',
    });

    this.#portal(common);
    this.stage = this.#stage(props);
  }

  /** The key authorizer: it reads keys and writes only the rate-limit buckets. */
  #authorizerFunction(props: ApiProps, common: Common): ServiceFunction {
    const limits = props.config.rateLimits;
    const authorizerFn = new ServiceFunction(this, 'Authorizer', {
      ...common,
      entry: PIPELINE_FUNCTIONS.Authorizer,
      description: 'API key authorizer and per-key rate limits',
      environment: {
        RATE_LIMIT_TEST_PER_SECOND: String(limits.test),
        RATE_LIMIT_LIVE_PER_SECOND: String(limits.live),
        RATE_LIMIT_BURST_FACTOR: String(limits.burstFactor),
        RATE_LIMIT_AUTH_FAILURES_PER_SECOND: String(limits.authFailures),
      },
    }).bindTable(props.table, true);
    // Its only write: the rate-limit buckets (docs/rate-limits.md), by an IAM condition on their key prefix.
    authorizerFn.addToRolePolicy(
      new PolicyStatement({
        actions: ['dynamodb:UpdateItem'],
        resources: [props.table.tableArn],
        conditions: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [`${RATE_PK_PREFIX}*`] } },
      }),
    );
    return authorizerFn;
  }

  /** One function per operation of shared/routes.ts, each on its route behind the authorizer. */
  #operations(props: ApiProps, common: Common, authorizer: HttpLambdaAuthorizer): void {
    for (const route of routes) {
      if (!route.handler) continue;
      const id = route.operationId[0]?.toUpperCase() + route.operationId.slice(1);
      const fn = new ServiceFunction(this, id, {
        ...common,
        entry: route.handler,
        description: `${route.method} ${route.path}`,
        // Recover's window of events is sized against its timeout (docs/capacity.md, Recover).
        ...(route.operationId === 'recoverWebhookEndpoint'
          ? { timeout: Duration.seconds(props.config.recoverTimeoutSeconds) }
          : {}),
        // The cursor key is read through the extension on localhost: no Secrets Manager client in the bundle.
        ...(route.secrets.includes('cursor')
          ? { paramsAndSecrets: ParamsAndSecretsLayerVersion.fromVersion(ParamsAndSecretsVersions.V1_0_103) }
          : {}),
        ...(route.files.length > 0 ? { copyPaths: route.files } : {}),
      });
      // A function that is not table-backed (the event types answer from their file) gets no table.
      if (id in FUNCTION_TABLE_PARTS) fn.bindTable(props.table, route.method === 'GET');
      if (route.secrets.includes('cipher')) {
        // Exactly what envelope encryption uses, under the shop's encryption context.
        grantSealSecrets(fn, props.secretsKey);
      }
      if (route.secrets.includes('cursor')) {
        props.cursorSecret.grantRead(fn);
        fn.addEnvironment('CURSOR_SECRET_ARN', props.cursorSecret.secretArn);
      }
      this.httpApi.addRoutes({
        path: route.path,
        methods: [HttpMethod[route.method]],
        integration: new HttpLambdaIntegration(`${id}Integration`, fn),
        authorizer,
      });
      this.functions.push(fn);
    }
  }

  #portal(common: Common): void {
    // The webhook portal: a page and its files, public like the fallback (it reads no table);
    // the page asks for a key and sends it only to the /v1 routes above.
    // Its other methods fall to $default, whose fallback answers 405 with Allow.
    const portalFn = new ServiceFunction(this, 'Portal', {
      ...common,
      entry: PIPELINE_FUNCTIONS.Portal,
      description: 'GET and HEAD /portal: the webhook portal page and its files',
      copyPaths: ['portal'],
    });
    this.functions.push(portalFn);
    const portalMethods = portalRoute.methods.map((m) => HttpMethod[m]);
    this.httpApi.addRoutes({
      path: portalRoute.paths[0],
      methods: portalMethods,
      integration: new HttpLambdaIntegration('PortalIntegration', portalFn),
    });
    this.httpApi.addRoutes({
      path: portalRoute.paths[1],
      methods: portalMethods,
      integration: new HttpLambdaIntegration('PortalFileIntegration', portalFn),
    });
  }

  /** The $default stage: throttled, with access logs. */
  #stage(props: ApiProps): HttpStage {
    const stage = new HttpStage(this, 'Stage', {
      httpApi: this.httpApi,
      stageName: '$default',
      autoDeploy: true,
      throttle: { rateLimit: props.config.throttleRate, burstLimit: props.config.throttleBurst },
    });
    const accessLogs = new LogGroup(this, 'AccessLogs', {
      retention: props.logRetention,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    (stage.node.defaultChild as CfnStage).accessLogSettings = {
      destinationArn: accessLogs.logGroupArn,
      format: JSON.stringify({
        requestId: '$context.requestId',
        ip: '$context.identity.sourceIp',
        time: '$context.requestTime',
        method: '$context.httpMethod',
        path: '$context.path',
        routeKey: '$context.routeKey',
        status: '$context.status',
        latencyMs: '$context.responseLatency',
        integrationError: '$context.integrationErrorMessage',
        authorizerError: '$context.authorizer.error',
      }),
    };
    return stage;
  }

  get url(): string {
    return `https://${this.httpApi.apiId}.execute-api.${Stack.of(this).region}.${Stack.of(this).urlSuffix}`;
  }
}
