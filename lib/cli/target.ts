import { existsSync, readFileSync } from 'node:fs';

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
  /** Where the target's API answers, for the links the CLI prints (`portal open`); absent when unknown. */
  apiUrl?: string;
}

const LOCAL = { endpoint: 'http://127.0.0.1:8000', table: 'shop-calls' };

/**
 * `--stack NAME` (before the command): the deployed stack whose outputs `npx cdk deploy
 * --outputs-file cdk-outputs.json` wrote (`--outputs FILE` for another file). Its table, Region and
 * secrets key come from there, so no DYNAMODB_ENDPOINT, AWS_REGION or TABLE_NAME set by hand can
 * send a write to the local table or another Region. Without it: the local stack (`npm start`).
 */
export function resolveTarget(argv: string[], env: NodeJS.ProcessEnv = process.env, read: (file: string) => string | null = readIfPresent): CliTarget {
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
    // A local stack on another port (npm start with DYNAMODB_PORT) is named the same way; an empty value is not AWS.
    const endpoint = env.DYNAMODB_ENDPOINT || LOCAL.endpoint;
    const table = env.TABLE_NAME || LOCAL.table;
    return {
      argv: rest,
      env: { DYNAMODB_ENDPOINT: endpoint, TABLE_NAME: table },
      banner: `Local stack: table ${table} on DynamoDB Local at ${endpoint} (npm start). For a deployed stack: --stack NAME.`,
      local: true,
      endpoint,
      apiUrl: `http://127.0.0.1:${env.PORT || 3000}`,
    };
  }
  const text = read(file);
  if (text === null) throw new TargetError(`${file} not found: deploy with \`npx cdk deploy --outputs-file ${file}\`, or name the file with --outputs (docs/deploy.md)`);
  const outputs = (JSON.parse(text) as Record<string, Record<string, string> | undefined>)[stack];
  if (!outputs?.TableName || !outputs.Region) throw new TargetError(`${file} has no TableName and Region for stack ${stack} (deployed before they were outputs? deploy again)`);
  return {
    argv: rest,
    // Empty DYNAMODB_ENDPOINT: the AWS endpoint of the Region, never DynamoDB Local.
    env: { DYNAMODB_ENDPOINT: '', TABLE_NAME: outputs.TableName, AWS_REGION: outputs.Region, ...(outputs.SecretsKeyArn ? { SECRETS_KMS_KEY_ID: outputs.SecretsKeyArn } : {}) },
    banner: `Stack ${stack}: table ${outputs.TableName} in ${outputs.Region}.`,
    local: false,
    ...(outputs.ApiUrl ? { apiUrl: outputs.ApiUrl.replace(/\/+$/, '') } : {}),
  };
}

/** What went wrong, said for an operator: an unreachable local stack is named as such. */
export function explainFailure(err: unknown, target: Pick<CliTarget, 'local' | 'endpoint'>): string {
  const codes = [err, ...((err as { errors?: unknown[] }).errors ?? [])].map((e) => (e as { code?: string }).code);
  if (target.local && codes.includes('ECONNREFUSED')) return `nothing answers at ${target.endpoint ?? LOCAL.endpoint}: is \`npm start\` running?`;
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
