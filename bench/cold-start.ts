/**
 * Cold start: every Lambda bundled as the CDK bundles it (entries, esbuild options and
 * aliases from lib/constructs), its minified size, and what a cold start costs it in a fresh
 * Node process: loading its module, then its first invocation, with an event shaped as the
 * invoking service sends it, the environment the stack gives it, and every AWS endpoint
 * answered by a loopback stub (bench/lib/aws-stub.ts) over a seeded copy of the table
 * (bench/lib/cold-start-cases.ts), so the request goes the way a working one goes.
 *
 * Beside each function, its reference: a bundle built the same way that constructs exactly
 * the SDK clients the function uses (bench/reference/), measured the same way against the
 * same stub. The target: every function ≤ 1.3× its reference, with the pressure on our code
 * and never on the SDK. So the reference makes, once each, the SDK requests the function's
 * first invocation makes (a first `Query` or `TransactWriteItems` costs the SDK its own
 * first-use work, whoever sends it); the table also prints each function against the literal
 * reference, one request per client. The two functions with no SDK client (the portal, the
 * fallback) have a reference that loads the same libraries (Powertools' Logger) and serves
 * the same answer, checked against theirs, so what is compared is still our code's share.
 * Bundle sizes are printed for what they say about load time; they carry no target.
 *
 * Each round runs every function right after its reference (fresh processes), so both meet
 * the machine in the same state; a function whose reference takes little CPU runs several pairs
 * in its round, alternated, and the round takes each side's median process (ROUND_CPU_MS). A
 * function's ratio is the median of its rounds' ratios (BENCH_INIT_RUNS rounds, default 11),
 * printed with their quartiles, its times the medians of its rounds.
 *
 *   npm run bench:cold-start         (BENCH_INIT_RUNS=11; BENCH_COLD_START_ONLY=GetShop,Deliver to measure a few)
 */
import './lib/quiet';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildBundleWithInputs } from '../lib/build/bundles';
import { allFunctionEntries, repoRoot } from '../lib/constructs/entries';
import type { ReferenceRequests } from './reference/sdk/requests';
import { startAwsStub } from './lib/aws-stub';
import { coldStartCases, seedTable, type ColdStartCase, type SdkClient } from './lib/cold-start-cases';
import { functionEnvironments, lambdaVariables } from './lib/function-env';
import { median, printTable, setting, spreadOf, verdict, withSpread } from './lib/stats';

const RUNS = setting('BENCH_INIT_RUNS', 11);
/** A comma-separated list of functions to measure (with their references) instead of all, while working on them. */
const ONLY = process.env.BENCH_COLD_START_ONLY?.split(',')
  .map((s) => s.trim())
  .filter(Boolean);
const RATIO = 1.3;
/**
 * The reference CPU a round spans, up to MOST_PER_ROUND pairs. One fresh process's CPU varies by a
 * few ms from the next (scheduling, page faults): next to a 15 ms reference that is a fifth of the
 * ratio, next to a 150 ms one a fiftieth. So a round of a function whose reference is small runs
 * several pairs, alternated, and takes the median process of each side.
 */
const ROUND_CPU_MS = 100;
const MOST_PER_ROUND = 9;
/** Pairs per round (odd, so a median is a process) for a reference of `referenceCpuMs`. */
const perRoundFor = (referenceCpuMs: number) => {
  const spanning = Math.max(1, Math.ceil(ROUND_CPU_MS / referenceCpuMs));
  return Math.min(MOST_PER_ROUND, spanning % 2 === 0 ? spanning + 1 : spanning);
};

const PACKAGES: Record<SdkClient, string> = {
  DynamoDB: '@aws-sdk/client-dynamodb',
  KMS: '@aws-sdk/client-kms',
  SQS: '@aws-sdk/client-sqs',
  Scheduler: '@aws-sdk/client-scheduler',
  SES: '@aws-sdk/client-sesv2',
};
const ORDER: SdkClient[] = ['DynamoDB', 'SQS', 'KMS', 'Scheduler', 'SES'];
/** The reference bundle of each set of clients (it makes the requests its event names). */
const REFERENCES: Record<string, string> = {
  DynamoDB: 'bench/reference/dynamodb.ts',
  'DynamoDB + KMS': 'bench/reference/dynamodb-kms.ts',
  'DynamoDB + SQS': 'bench/reference/dynamodb-sqs.ts',
  'DynamoDB + SES': 'bench/reference/dynamodb-ses.ts',
  'DynamoDB + SQS + KMS + Scheduler': 'bench/reference/dynamodb-sqs-kms-scheduler.ts',
};
const setName = (clients: readonly SdkClient[]) => ORDER.filter((c) => clients.includes(c)).join(' + ');

/**
 * Run in the measured process (plain Node, nothing preloaded): reads the event, then times
 * the module's load and its handler's first invocation, and prints both with the answer.
 */
const CHILD = `
const { readFileSync } = require('node:fs');
const [file, eventFile] = process.argv.slice(1);
const event = JSON.parse(readFileSync(eventFile, 'utf8'));
const name = process.env.AWS_LAMBDA_FUNCTION_NAME;
const deadline = Date.now() + 30000;
const context = {
  callbackWaitsForEmptyEventLoop: true,
  functionName: name,
  functionVersion: '$LATEST',
  invokedFunctionArn: 'arn:aws:lambda:us-east-1:123456789012:function:' + name,
  memoryLimitInMB: '256',
  awsRequestId: 'c6af9ac6-7b61-11e6-9a41-93e812345678',
  logGroupName: '/aws/lambda/' + name,
  logStreamName: '2026/11/25/[$LATEST]0123456789abcdef',
  getRemainingTimeInMillis: () => deadline - Date.now(),
  done() {},
  fail() {},
  succeed() {},
};
const c0 = process.cpuUsage();
const t0 = process.hrtime.bigint();
const { handler } = require(file);
const t1 = process.hrtime.bigint();
Promise.resolve(handler(event, context)).then((result) => {
  const t2 = process.hrtime.bigint();
  const cpu = process.cpuUsage(c0);
  const body = result && typeof result.body === 'string' ? result.body : null;
  const out = body === null ? result : { ...result, body: body.slice(0, 400) };
  const figures = {
    loadMs: Number(t1 - t0) / 1e6,
    invokeMs: Number(t2 - t1) / 1e6,
    cpuMs: (cpu.user + cpu.system) / 1000,
    result: out === undefined ? null : out,
    bodySha256: body === null ? null : require('node:crypto').createHash('sha256').update(body).digest('hex'),
  };
  if (body !== null && process.env.BENCH_BODY_FILE) require('node:fs').writeFileSync(process.env.BENCH_BODY_FILE, body);
  process.stdout.write('\\nBENCH_COLD_START ' + JSON.stringify(figures) + '\\n');
  process.exit(0);
}, (err) => {
  process.stderr.write(String((err && err.stack) || err));
  process.exit(1);
});
`;

/** A bundle, and how one process runs it: its environment and event. */
interface Run {
  name: string;
  file: string;
  bytes: number;
  env: Record<string, string>;
  eventFile: string;
  sourceMaps?: boolean;
}
interface Sample {
  loadMs: number;
  invokeMs: number;
  /** CPU time of the process (every thread) over the same span. */
  cpuMs: number;
  result: unknown;
  /** The whole body's hash (the result holds its first 400 characters), taken after the timings. */
  bodySha256: string | null;
}
const wall = (s: Sample) => s.loadMs + s.invokeMs;
/** A round's process: of an odd number, the one of median CPU. */
const medianSample = (samples: Sample[]): Sample =>
  [...samples].sort((a, b) => a.cpuMs - b.cpuMs)[Math.floor((samples.length - 1) / 2)] as Sample;
const cpu = (s: Sample) => s.cpuMs;

function measure(r: Run): Promise<Sample> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [...(r.sourceMaps ? ['--enable-source-maps'] : []), '-e', CHILD, r.file, r.eventFile],
      { cwd: repoRoot(), env: r.env, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (c: Buffer) => out.push(c));
    child.stderr.on('data', (c: Buffer) => err.push(c));
    child.on('error', reject);
    child.on('close', (code) => {
      const line = Buffer.concat(out)
        .toString('utf8')
        .split('\n')
        .find((l) => l.startsWith('BENCH_COLD_START '));
      if (code !== 0 || !line)
        return reject(new Error(`${r.name}: exit ${code}\n${Buffer.concat(err).toString('utf8')}`));
      resolve(JSON.parse(line.slice('BENCH_COLD_START '.length)) as Sample);
    });
  });
}

/** Why a reference's answer is not the function's (status, content type, whole body), or null. */
function differentAnswer(fn: Sample, reference: Sample): string | null {
  type Answer = { statusCode?: number; headers?: Record<string, string> } | null;
  const [a, b] = [fn.result as Answer, reference.result as Answer];
  if (a?.statusCode !== b?.statusCode) return `status ${b?.statusCode}, the function's ${a?.statusCode}`;
  const [typeA, typeB] = [a?.headers?.['content-type'], b?.headers?.['content-type']];
  if (typeA !== typeB) return `content-type ${typeB}, the function's ${typeA}`;
  if (fn.bodySha256 !== reference.bodySha256) return 'another body';
  return null;
}

/** 'DynamoDB GetItem ×2, KMS Decrypt' from the stub's counts. */
const describe = (asked: Record<string, number> | undefined) =>
  Object.entries(asked ?? {})
    .map(([op, n]) => (n > 1 ? `${op} ×${n}` : op))
    .join(', ') || 'none';

const stub = await startAwsStub('cold-start-cursor-secret-0123456789abcdef');
const dir = mkdtempSync(join(tmpdir(), 'cold-start-'));
/** Runs one process; the stub's requests during it; fails on any the stub could not answer. */
const run = async (r: Run): Promise<{ sample: Sample; asked: Record<string, number> }> => {
  stub.takeCalls();
  const sample = await measure(r);
  const asked = stub.takeCalls();
  const errors = stub.takeErrors();
  if (errors.length > 0) throw new Error(`${r.name}: the stub could not answer ${errors.join('; ')}`);
  return { sample, asked };
};
try {
  const seed = await seedTable(stub);
  stub.setTable(seed.items);
  const cases = coldStartCases(stub, seed);
  const entries = allFunctionEntries();
  const envs = functionEnvironments(Object.keys(entries), stub);
  const referenceEnv = {
    ...Object.assign({}, ...Object.values(envs)),
    ...lambdaVariables('Reference', stub),
    BENCH_KMS_BLOB: stub.dataKey.blob.toString('base64'),
  } as Record<string, string>;
  let files = 0;
  const bodyFile = (name: string) => join(dir, `${name}-body`);
  const eventFile = (event: unknown) => {
    const file = join(dir, `event-${files++}.json`);
    writeFileSync(file, JSON.stringify(event));
    return file;
  };
  const bundle = async (name: string, entry: string, clients: readonly SdkClient[]) => {
    const file = join(dir, `${files++}.cjs`);
    const { bytes, inputs } = await buildBundleWithInputs(join(repoRoot(), entry), file);
    // The reference takes the clients the wiring says; a bundle that carries another would hide it in its reference.
    const bundled = ORDER.filter((c) => inputs.some((i) => i.startsWith(`node_modules/${PACKAGES[c]}/`)));
    if (setName(bundled) !== setName(clients))
      throw new Error(
        `${name} bundles ${setName(bundled) || 'no SDK client'}, its wiring says ${setName(clients) || 'none'}`,
      );
    return { file, bytes };
  };

  // For scale only: what loading a module costs Node at all.
  const empty: Run = {
    name: 'empty handler (for scale)',
    env: referenceEnv,
    eventFile: eventFile({}),
    ...(await bundle('empty handler', 'bench/reference/empty.ts', [])),
  };
  /** Per set of clients: its reference bundle, and that bundle run as the issue words it (one request per client). */
  const oneCallEach = new Map<string, Run>();
  interface Measured {
    name: string;
    scenario: ColdStartCase;
    fn: Run;
    /** Its reference as this benchmark runs it: once each, the SDK requests the function made (set after the first
     * pass). */
    reference: Run;
    set: string;
    /** Requests of the function's first invocation, and of its reference's, in the pass that checks them. */
    asked?: Record<string, number>;
    referenceAsked?: Record<string, number>;
    /** Pairs of the function and its reference per round (sized after the first pass). */
    perRound: number;
    samples: Sample[];
    referenceSamples: Sample[];
  }
  const measured: Measured[] = [];
  for (const [name, entry] of Object.entries(entries)) {
    if (ONLY && !ONLY.includes(name)) continue;
    const scenario = cases[name];
    if (!scenario) throw new Error(`no cold-start scenario for ${name}`);
    const fn: Run = {
      name,
      env: envs[name] as Record<string, string>,
      eventFile: eventFile(scenario.event),
      ...(await bundle(name, entry, scenario.clients)),
    };
    if (scenario.sameLibraries) {
      const [label, referenceEntry] = scenario.sameLibraries;
      const reference: Run = {
        name: `${name}'s reference`,
        // A reference that serves the function's own body reads it from where the first pass saves it.
        env: { ...referenceEnv, BENCH_REFERENCE_BODY: bodyFile(name) },
        eventFile: fn.eventFile,
        ...(await bundle(label, referenceEntry, [])),
      };
      measured.push({ name, scenario, fn, reference, set: label, perRound: 1, samples: [], referenceSamples: [] });
      continue;
    }
    const set = setName(scenario.clients);
    const referenceEntry = REFERENCES[set];
    if (!referenceEntry) throw new Error(`no reference for ${name} (${set || 'no SDK client'})`);
    const built = await bundle(`reference ${set}`, referenceEntry, scenario.clients);
    if (!oneCallEach.has(set))
      oneCallEach.set(set, { name: `${set}, one request each`, env: referenceEnv, eventFile: eventFile({}), ...built });
    measured.push({
      name,
      scenario,
      fn,
      reference: { name: `${name}'s reference`, env: referenceEnv, eventFile: '', ...built },
      set,
      perRound: 1,
      samples: [],
      referenceSamples: [],
    });
  }

  if (measured.length === 0) throw new Error(`BENCH_COLD_START_ONLY names no function: ${ONLY?.join(', ')}`);

  // First pass, not timed: each first invocation must go the way a working request goes, and what it asks of AWS
  // becomes its reference's event.
  const firstReferenceCpu = new Map<Measured, number>();
  for (const m of measured) {
    const { sample, asked } = await run({ ...m.fn, env: { ...m.fn.env, BENCH_BODY_FILE: bodyFile(m.name) } });
    const problem =
      m.scenario.check(sample.result) ??
      (m.scenario.needs ?? [])
        .filter((n) => !asked[n])
        .map((n) => `made no ${n}`)
        .join(', ');
    if (problem) throw new Error(`${m.name}: its first invocation ${problem}`);
    m.asked = asked;
    if (m.scenario.sameLibraries) {
      const reference = (await run(m.reference)).sample;
      const differs = differentAnswer(sample, reference);
      if (differs) throw new Error(`${m.name}'s reference does not serve the same answer: ${differs}`);
      firstReferenceCpu.set(m, cpu(reference));
      continue;
    }
    const requests: ReferenceRequests = Object.fromEntries(m.scenario.clients.map((c) => [c, [] as string[]]));
    for (const key of Object.keys(asked)) {
      const [service, operation] = key.split(' ');
      const ops = requests[service as SdkClient];
      if (ops && operation && !ops.includes(operation)) ops.push(operation);
    }
    m.reference.eventFile = eventFile(requests);
    const reference = await run(m.reference);
    m.referenceAsked = reference.asked;
    firstReferenceCpu.set(m, cpu(reference.sample));
  }
  // Pairs a round from the median of three reference processes: the first after a build is the slowest.
  for (const m of measured) {
    const more = [(await run(m.reference)).sample, (await run(m.reference)).sample];
    m.perRound = perRoundFor(median([firstReferenceCpu.get(m) as number, ...more.map(cpu)]));
  }
  const getShop = measured.find((m) => m.name === 'GetShop');
  const extra = getShop
    ? [
        {
          ...getShop,
          name: 'GetShop, deployed with -c sourceMaps=true',
          fn: { ...getShop.fn, sourceMaps: true },
          samples: [],
          referenceSamples: [],
        } as Measured,
      ]
    : [];

  const scale = new Map<Run, Sample[]>([empty, ...oneCallEach.values()].map((r) => [r, []]));
  for (let round = 0; round < RUNS; round++) {
    for (const [r, samples] of scale) samples.push((await run(r)).sample);
    for (const m of [...measured, ...extra]) {
      const references: Sample[] = [];
      const fns: Sample[] = [];
      for (let i = 0; i < m.perRound; i++) {
        references.push((await run(m.reference)).sample);
        fns.push((await run(m.fn)).sample);
      }
      m.referenceSamples.push(medianSample(references));
      m.samples.push(medianSample(fns));
    }
  }

  const ms = (x: number) => x.toFixed(1);
  const kb = (b: number) => (b / 1024).toFixed(1);
  const figures = (m: Measured) => {
    const literal = oneCallEach.get(m.set);
    const literalCpu = literal ? median((scale.get(literal) ?? []).map(cpu)) : Number.NaN;
    return {
      load: median(m.samples.map((s) => s.loadMs)),
      invoke: median(m.samples.map((s) => s.invokeMs)),
      wall: median(m.samples.map(wall)),
      cpu: median(m.samples.map(cpu)),
      reference: median(m.referenceSamples.map(cpu)),
      ratio: spreadOf(m.samples.map((s, i) => cpu(s) / cpu(m.referenceSamples[i] as Sample))),
      literal: median(m.samples.map(cpu)) / literalCpu,
    };
  };
  const row = (m: Measured, checked: boolean) => {
    const f = figures(m);
    return [
      m.name,
      kb(m.fn.bytes),
      ms(f.load),
      ms(f.invoke),
      ms(f.wall),
      ms(f.cpu),
      m.set,
      ms(f.reference),
      String(m.perRound),
      withSpread(f.ratio, (x) => x.toFixed(2), '×', 'iqr'),
      Number.isFinite(f.literal) ? `${f.literal.toFixed(2)}×` : '',
      checked ? verdict(f.ratio.median <= RATIO) : '',
    ];
  };
  printTable(
    'Cold start: module load + first invocation, beside a reference with the same SDK clients making the same ' +
      'SDK requests once each, or for a function with no SDK client the same libraries serving the same answer ' +
      `(medians of ${RUNS} rounds of fresh processes, each function right after its reference; a round of a ` +
      `small reference runs an odd number of pairs, up to ${MOST_PER_ROUND}, to span ${ROUND_CPU_MS} ms of its CPU, ` +
      `and takes each side's median process; ratios of CPU ms, ` +
      `with the quartiles of the rounds' ratios; bundle size reported, no target; Node ${process.versions.node})`,
    [
      'function',
      'KB',
      'load ms',
      '1st call ms',
      'wall ms',
      'CPU ms',
      'its reference',
      'reference CPU ms',
      'pairs a round',
      'ratio (IQR, rounds)',
      'vs one request per client',
      `≤ ${RATIO}× reference`,
    ],
    [...measured.map((m) => row(m, true)), ...extra.map((m) => row(m, false))],
  );
  printTable(
    `The references with one request per client, and Node's own cost of a module`,
    ['process', 'KB', 'load ms', '1st call ms', 'wall ms', 'CPU ms'],
    [...scale].map(([r, s]) => [
      r.name,
      kb(r.bytes),
      ms(median(s.map((x) => x.loadMs))),
      ms(median(s.map((x) => x.invokeMs))),
      ms(median(s.map(wall))),
      ms(median(s.map(cpu))),
    ]),
  );
  const answer = (result: unknown) => {
    const r = result as {
      statusCode?: number;
      isAuthorized?: boolean;
      batchItemFailures?: unknown[];
      ok?: boolean;
      enqueued?: number;
    } | null;
    if (r?.statusCode !== undefined) return String(r.statusCode);
    if (r?.isAuthorized !== undefined) return r.isAuthorized ? 'authorized' : 'refused';
    if (r?.batchItemFailures !== undefined) return `${r.batchItemFailures.length} failed`;
    if (r?.ok !== undefined) return r.ok ? 'recorded' : 'refused';
    if (r?.enqueued !== undefined) return `${r.enqueued} sent again`;
    return JSON.stringify(r);
  };
  printTable(
    'What each first invocation asked of the stub, and its reference',
    ['function', 'answer', 'its requests (AWS, and the extension or webhook on loopback)', "its reference's"],
    measured.map((m) => [
      m.name,
      answer(m.samples[0]?.result),
      describe(m.asked),
      m.scenario.sameLibraries ? 'none (the same answer, checked)' : describe(m.referenceAsked),
    ]),
  );
  const ratios = measured.map((m) => ({ name: m.name, ratio: figures(m).ratio }));
  const ratioMet = ratios.filter((r) => r.ratio.median <= RATIO).length;
  // A median whose middle half of rounds spans the line can fall either side of it in the next run.
  const onTheLine = ratios.filter((r) => r.ratio.q1 <= RATIO && r.ratio.q3 > RATIO).map((r) => r.name);
  const largest = measured.reduce((a, b) => (b.fn.bytes > a.fn.bytes ? b : a), measured[0] as Measured);
  console.log(
    `\n${ratioMet} of ${measured.length} with load + first invocation within ${RATIO}× their reference ` +
      `(median of ${RUNS} rounds); quartiles spanning ${RATIO}×: ${onTheLine.join(', ') || 'none'}. ` +
      `Largest bundle: ${largest.name}, ${kb(largest.fn.bytes)} KB (reported, no target).`,
  );
} finally {
  await stub.close();
  rmSync(dir, { recursive: true, force: true });
}
