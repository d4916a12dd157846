import { existsSync, readFileSync } from 'node:fs';
import { findStack, localTableEnv, notRunningHint, recordedStack, type StackLookup } from '../local/stack-file';

/** Which table the operator CLI talks to, and the environment that points it there. */
export interface CliTarget {
  /** The CLI's own arguments, with `--stack` and `--outputs` taken out. */
  argv: string[];
  /** Merged over process.env by operatorDeps. */
  env: Record<string, string>;
  /** Printed to stderr first, so nobody writes to the wrong table unawares. */
  banner: string;
  local: boolean;
  /** DynamoDB Local's address, for the local stack. */
  endpoint?: string;
  /** What `npm start`'s stack file says, for the local stack. */
  stack?: StackLookup;
  /** Where the target's API answers, for the links the CLI prints (`portal open`); absent when unknown. */
  apiUrl?: string;
}

/**
 * `--stack NAME` (before the command): the deployed stack whose outputs `npx cdk deploy
 * --outputs-file cdk-outputs.json` wrote (`--outputs FILE` for another file). Its table, Region and
 * secrets key come from there, so no DYNAMODB_ENDPOINT, AWS_REGION or TABLE_NAME set by hand can
 * send a write to the local table or another Region. Without it: the local stack that `npm start`
 * runs, where its stack file says (lib/local/stack-file.ts), each setting overridable by the environment.
 */
export function resolveTarget(
  argv: string[],
  env: NodeJS.ProcessEnv = process.env,
  read: (file: string) => string | null = readIfPresent,
  lookUpStack: (env: NodeJS.ProcessEnv) => StackLookup = findStack,
): CliTarget {
  const rest = [...argv];
  const take = (flag: string): string | undefined => {
    const i = rest.indexOf(flag);
    if (i < 0 || i > firstCommandIndex(rest)) return undefined;
    const value = rest[i + 1];
    if (!value || value.startsWith('-')) throw new TargetError(`${flag} needs a value`);
    rest.splice(i, 2);
    return value;
  };
  const stack = take('--stack');
  const file = take('--outputs') ?? 'cdk-outputs.json';
  if (!stack) {
    // The stack file names npm start's ports, whatever they are; an empty DYNAMODB_ENDPOINT is not AWS.
    const lookup = lookUpStack(env);
    const local = localTableEnv(env, lookup);
    return {
      argv: rest,
      env: local,
      banner:
        `Local stack: table ${local.TABLE_NAME} on DynamoDB Local at ${local.DYNAMODB_ENDPOINT} ` +
        `(npm start). For a deployed stack: --stack NAME.`,
      local: true,
      endpoint: local.DYNAMODB_ENDPOINT,
      stack: lookup,
      // The running npm start's address (the stack file), unless PORT names another.
      apiUrl: env.PORT ? `http://127.0.0.1:${env.PORT}` : (recordedStack(lookup)?.api_url ?? 'http://127.0.0.1:3000'),
    };
  }
  const text = read(file);
  if (text === null)
    throw new TargetError(
      `${file} not found: deploy with \`npx cdk deploy --outputs-file ${file}\`, or name the ` +
        `file with --outputs (docs/deploy.md)`,
    );
  const outputs = (JSON.parse(text) as Record<string, Record<string, string> | undefined>)[stack];
  if (!outputs?.TableName || !outputs.Region)
    throw new TargetError(
      `${file} has no TableName and Region for stack ${stack} (deployed before they were outputs? deploy again)`,
    );
  return {
    argv: rest,
    // Empty DYNAMODB_ENDPOINT: the AWS endpoint of the Region, never DynamoDB Local.
    env: {
      DYNAMODB_ENDPOINT: '',
      TABLE_NAME: outputs.TableName,
      AWS_REGION: outputs.Region,
      ...(outputs.SecretsKeyArn ? { SECRETS_KMS_KEY_ID: outputs.SecretsKeyArn } : {}),
    },
    banner: `Stack ${stack}: table ${outputs.TableName} in ${outputs.Region}.`,
    local: false,
    ...(outputs.ApiUrl ? { apiUrl: outputs.ApiUrl.replace(/\/+$/, '') } : {}),
  };
}

/** What went wrong, said for an operator: an unreachable local stack is named as such. */
export function explainFailure(err: unknown, target: Pick<CliTarget, 'local' | 'endpoint' | 'stack'>): string {
  const codes = [err, ...((err as { errors?: unknown[] }).errors ?? [])].map((e) => (e as { code?: string }).code);
  if (target.local && codes.includes('ECONNREFUSED')) {
    return (
      `nothing answers at ${target.endpoint ?? 'the local DynamoDB'}: ` +
      `${target.stack ? notRunningHint(target.stack) : 'is `npm start` running?'}`
    );
  }
  // A refused or failed connection can come as an AggregateError with an empty message: its code says more.
  return (err as Error).message || codes.find(Boolean) || String(err);
}

export class TargetError extends Error {}

/** Flags after the command's first word belong to the command. */
function firstCommandIndex(args: string[]): number {
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    if (arg === '--stack' || arg === '--outputs') i++;
    else if (!arg.startsWith('-')) return i;
  }
  return args.length;
}

function readIfPresent(file: string): string | null {
  return existsSync(file) ? readFileSync(file, 'utf8') : null;
}
