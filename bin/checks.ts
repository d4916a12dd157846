/**
 * `npm test`'s static checks, side by side: formatting, ESLint, the import rules and the type check
 * are one process each, so together they take about as long as the slowest (tsc), not their sum.
 * Each one's output is printed whole when it ends, under its name; any failure fails the run.
 */
import { spawn } from 'node:child_process';

const CHECKS = ['format:check', 'lint', 'lint:imports', 'typecheck'];

function check(script: string): Promise<boolean> {
  return new Promise((resolve) => {
    const started = Date.now();
    const child = spawn('npm', ['run', '--silent', script], { stdio: ['ignore', 'pipe', 'pipe'] });
    const output: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => output.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => output.push(chunk));
    child.on('error', (err) => output.push(Buffer.from(`${err.message}\n`)));
    child.on('close', (code) => {
      const seconds = ((Date.now() - started) / 1000).toFixed(1);
      const text = Buffer.concat(output).toString('utf8');
      console.log(`${code === 0 ? 'passed' : 'FAILED'}: npm run ${script} (${seconds} s)${text ? `\n${text}` : ''}`);
      resolve(code === 0);
    });
  });
}

const passed = await Promise.all(CHECKS.map(check));
process.exitCode = passed.every(Boolean) ? 0 : 1;
