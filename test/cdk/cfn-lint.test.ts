import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ShopCallsStack } from '../../lib/stack';
import { cdkApp } from '../helpers/cdk-app';

/**
 * cfn-lint (installed on these machines, ENGINEERING.md) on the synthesized templates: an
 * environment-bound stack with every optional resource (alarm and sender emails, a reserved
 * sweeper), and an environment-agnostic one with the defaults.
 * W3005 is left out: CDK makes every function DependsOn its role, which cfn-lint calls redundant.
 */
const CFN_LINT = process.env.CFN_LINT ?? 'cfn-lint';
const available = spawnSync(CFN_LINT, ['--version'], { encoding: 'utf8' }).status === 0;
if (!available)
  console.warn(`cfn-lint not found (${CFN_LINT}): the template lint is skipped. Install it with pip install cfn-lint.`);

type Finding = { Level: string; Rule: { Id: string }; Message: string; Filename: string };

(available ? describe : describe.skip)('cfn-lint on the synthesized templates', () => {
  let outdir: string;
  beforeAll(() => {
    outdir = mkdtempSync(join(tmpdir(), 'cfn-lint-'));
    const app = cdkApp({}, { outdir });
    new ShopCallsStack(app, 'Defaults');
    const configured = cdkApp(
      {
        alarmEmail: 'oncall@shop.example',
        senderEmail: 'alerts@shop.example',
        sweeperReservedConcurrency: '1',
        fullTracing: 'true',
      },
      { outdir },
    );
    new ShopCallsStack(configured, 'Configured', { env: { account: '123456789012', region: 'eu-west-1' } });
    app.synth();
    configured.synth();
  });
  afterAll(() => rmSync(outdir, { recursive: true, force: true }));

  it('reports no error and no warning', () => {
    const templates = readdirSync(outdir)
      .filter((f) => f.endsWith('.template.json'))
      .map((f) => join(outdir, f));
    expect(templates).toHaveLength(2);
    const run = spawnSync(CFN_LINT, ['--format', 'json', '--ignore-checks', 'W3005', '--', ...templates], {
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
    });
    expect(run.error).toBeUndefined();
    const findings = JSON.parse(run.stdout || '[]') as Finding[];
    expect(findings.map((f) => `${f.Level} ${f.Rule.Id} ${f.Filename}: ${f.Message}`)).toEqual([]);
    expect(run.status).toBe(0);
  }, 120_000);
});
