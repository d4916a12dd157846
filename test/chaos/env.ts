import { relative } from 'node:path';
import { parseChaos } from '../../lib/local/chaos';

/**
 * Chaos mode for every local stack an e2e-chaos file starts, in this process (test/helpers/stack.ts)
 * or as `npm start` (test/helpers/child-stack.ts passes the environment on). Jest gives each test
 * file its own copy of process.env, so the e2e project's files, run by the same workers, stay calm.
 *
 * Each file's seed is the run's mixed with the file's path: the files do not all meet the same
 * first faults, and the run's value replays any of them (./global-setup.ts prints it). The other
 * items of the run's value are kept as given.
 */
const given = process.env.E2E_LOCAL_CHAOS || 'on';
const run = parseChaos(given, { scheduleLateMs: 0 });
if (run) {
  let hash = 0;
  for (const c of relative(process.cwd(), expect.getState().testPath ?? ''))
    hash = (Math.imul(hash, 31) + c.charCodeAt(0)) | 0;
  const knobs = given.split(',').filter((item) => !/^\s*(seed:.*|1|on|true)\s*$/i.test(item));
  process.env.LOCAL_CHAOS = [`seed:${(run.seed ^ hash) >>> 1}`, ...knobs].join(',');
}
