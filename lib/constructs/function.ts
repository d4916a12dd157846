import { Duration, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import type { ITableV2 } from 'aws-cdk-lib/aws-dynamodb';
import {
  Architecture,
  LoggingFormat,
  Runtime,
  SystemLogLevel,
  Tracing,
  type ParamsAndSecretsLayerVersion,
  type RecursiveLoop,
} from 'aws-cdk-lib/aws-lambda';
import { LogLevel, NodejsFunction, OutputFormat, type BundlingOptions } from 'aws-cdk-lib/aws-lambda-nodejs';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { LogGroup } from 'aws-cdk-lib/aws-logs';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import { dirname, join } from 'node:path';
import { FUNCTION_TABLE_PARTS, repoRoot } from './entries';
import { tableActions } from './table-access';

/**
 * Module substitutions in the Lambda bundles, relative to the repository root (esbuild's
 * working directory when the CDK bundles). Lambda hands a function its role's credentials
 * in the environment, the first link of the SDK's default chain: the bundles carry that link
 * alone (shared/aws/lambda-credentials.ts, docs/architecture.md).
 */
export const BUNDLE_ALIASES: Record<string, string> = {
  '@aws-sdk/credential-provider-node': './shared/aws/lambda-credentials.ts',
};

/** How every function is bundled; lib/build/bundles.ts builds with the same options. */
export const BUNDLING = {
  minify: true,
  sourceMap: true,
  target: 'node24',
  format: OutputFormat.CJS,
  // Bundle the AWS SDK too: a pinned, tree-shaken copy instead of whatever the runtime ships,
  // whose modules a cold start would load file by file.
  externalModules: [],
  mainFields: ['module', 'main'],
  esbuildArgs: Object.fromEntries(Object.entries(BUNDLE_ALIASES).map(([from, to]) => ['--alias', `${from}=${to}`])),
  // esbuild's default (info) prints each bundle's files and sizes at every synth; warnings and
  // errors still show. Sizes: `npm run bundle:report`.
  logLevel: LogLevel.WARNING,
} satisfies BundlingOptions;

export interface ServiceFunctionProps {
  /** Handler file relative to the repository root. */
  entry: string;
  description?: string;
  timeout?: Duration;
  memorySize?: number;
  environment?: Record<string, string>;
  logRetention: RetentionDays;
  logLevel: string;
  /** Set NODE_OPTIONS=--enable-source-maps (costs cold-start time; the .map files ship either way). */
  sourceMaps?: boolean;
  /** Where failed asynchronous invocations go. */
  deadLetterQueue?: IQueue;
  /** Concurrency set aside for (and capping) this function; unset: it shares the account's pool. */
  reservedConcurrentExecutions?: number;
  /** Folders and files (relative to the repository root) copied into the asset at the same path, read at run time. */
  copyPaths?: string[];
  /**
   * The Parameters and Secrets Lambda Extension (its layer and PARAMETERS_SECRETS_* variables), for
   * functions that read a secret.
   */
  paramsAndSecrets?: ParamsAndSecretsLayerVersion;
  /** Lambda's recursive-loop detection (default: it stops a loop of the same trace after about 16 rounds). */
  recursiveLoop?: RecursiveLoop;
  /**
   * Active (Lambda samples: 1 a second + 5 %) or pass-through (traced only when the caller
   * sampled); default active.
   */
  tracing?: Tracing;
  /** Lambda's own lines (START, END, REPORT are INFO); default: Lambda's (INFO). */
  systemLogLevel?: SystemLogLevel;
}

/** esbuild bundles code only: these hooks copy plain files into the asset after it. */
export function copyHooks(paths: string[]): NonNullable<BundlingOptions['commandHooks']> {
  return {
    beforeBundling: () => [],
    beforeInstall: () => [],
    afterBundling: (inputDir, outputDir) =>
      paths.flatMap((p) => [
        `mkdir -p "${dirname(join(outputDir, p))}"`,
        `cp -R "${join(inputDir, p)}" "${join(outputDir, p)}"`,
      ]),
  };
}

/**
 * The one Function base class: Node.js 24 on arm64, bundled with esbuild, its own log group, JSON
 * logs, X-Ray tracing, Powertools env.
 */
export class ServiceFunction extends NodejsFunction {
  constructor(scope: Construct, id: string, props: ServiceFunctionProps) {
    const root = repoRoot();
    const logGroup = new LogGroup(scope, `${id}Logs`, {
      retention: props.logRetention,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    super(scope, id, {
      entry: join(root, props.entry),
      projectRoot: root,
      depsLockFilePath: join(root, 'package-lock.json'),
      handler: 'handler',
      description: props.description,
      runtime: Runtime.NODEJS_24_X,
      architecture: Architecture.ARM_64,
      memorySize: props.memorySize ?? 256,
      timeout: props.timeout ?? Duration.seconds(10),
      bundling: props.copyPaths ? { ...BUNDLING, commandHooks: copyHooks(props.copyPaths) } : BUNDLING,
      logGroup,
      // Lambda's own lines (START, REPORT, errors) as JSON too, so one query language reads the whole group.
      loggingFormat: LoggingFormat.JSON,
      systemLogLevelV2: props.systemLogLevel,
      // X-Ray segments (docs/operations.md, Observability); the delivery path passes through
      // (docs/capacity.md, Tracing).
      tracing: props.tracing ?? Tracing.ACTIVE,
      deadLetterQueue: props.deadLetterQueue,
      reservedConcurrentExecutions: props.reservedConcurrentExecutions,
      paramsAndSecrets: props.paramsAndSecrets,
      recursiveLoop: props.recursiveLoop,
      environment: {
        // The stack's name: the `service` of every log line and the dimension of the custom metrics,
        // so two stacks in one account (staging, production) never add into one dashboard.
        POWERTOOLS_SERVICE_NAME: Stack.of(scope).stackName,
        POWERTOOLS_LOG_LEVEL: props.logLevel,
        ...(props.sourceMaps ? { NODE_OPTIONS: '--enable-source-maps' } : {}),
        AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
        ...props.environment,
      },
    });
    this.acknowledgeChecks(props.deadLetterQueue !== undefined, (props.tracing ?? Tracing.ACTIVE) === Tracing.ACTIVE);
  }

  private acknowledgeChecks(hasDeadLetterQueue: boolean, activeTracing: boolean): void {
    if (!activeTracing) {
      Validations.of(this).acknowledge({
        id: 'Serverless-LambdaTracing',
        reason:
          'Pass-through on the delivery path: active tracing there costs more than the ' +
          'deliveries (docs/capacity.md, Tracing); -c fullTracing=true turns it on.',
      });
    }
    Validations.of(this).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason: 'Active tracing: xray:PutTraceSegments and xray:PutTelemetryRecords have no resource-level permissions.',
    });
    if (!hasDeadLetterQueue) {
      Validations.of(this).acknowledge({
        id: 'Serverless-LambdaDLQ',
        reason:
          'A function DLQ catches failed asynchronous invocations only. This one is invoked ' +
          'synchronously (API Gateway) or by an event source mapping or schedule, each of which ' +
          'has its own dead-letter queue or on-failure destination (test/cdk/stack.test.ts).',
      });
    }
  }

  /**
   * Least privilege on the table: the actions of the stores this function is wired with
   * (FUNCTION_TABLE_PARTS, ./table-access.ts), on the table and its indexes; `readOnly`
   * (GET routes, the authorizer) keeps the reads.
   */
  bindTable(table: ITableV2, readOnly: boolean): this {
    const parts = FUNCTION_TABLE_PARTS[this.node.id];
    if (!parts)
      throw new Error(`${this.node.id}: no wiring parts declared in FUNCTION_TABLE_PARTS (lib/constructs/entries.ts)`);
    const actions = tableActions(parts, readOnly);
    if (actions.length > 0) table.grant(this, ...actions.map((a) => `dynamodb:${a}`));
    this.addEnvironment('TABLE_NAME', table.tableName);
    return this;
  }
}

/**
 * The delivery path's tracing: pass-through unless the operator turns on full tracing. Active
 * tracing there records ≈ 2 traces per delivery (fan-out and consumer), more than the rest of
 * the delivery costs (docs/capacity.md, Tracing).
 */
export function pipelineTracing(config: { fullTracing: boolean }): Tracing {
  return config.fullTracing ? Tracing.ACTIVE : Tracing.PASS_THROUGH;
}

/**
 * The delivery path's functions run per delivery: Lambda's START/END/REPORT lines only when
 * `platformLogs` asks (docs/capacity.md, Logs).
 */
export function pipelineSystemLogLevel(config: { platformLogs: boolean }): SystemLogLevel {
  return config.platformLogs ? SystemLogLevel.INFO : SystemLogLevel.WARN;
}
