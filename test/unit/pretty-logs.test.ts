import { Logger } from '../../shared/logger';
import { installPrettyLogs, prettyLine } from '../../lib/local/pretty-logs';

describe('pretty local logs', () => {
  it('turns the access line into method, path, status, duration, request id, shop and key', () => {
    const json = JSON.stringify({
      level: 'INFO',
      message: 'request',
      timestamp: '2026-11-22T10:04:05.123Z',
      service: 'shop-calls-api',
      sampling_rate: 0,
      method: 'GET',
      path: '/v1/calls',
      status: 200,
      duration_ms: 12.5,
      request_id: 'req_abc',
      shop_id: 'shop_1',
      key_id: 'key_1',
    });
    expect(prettyLine(json, { colour: false })).toBe(
      '10:04:05.123 INFO  GET /v1/calls 200 12.5 ms req_abc shop_1 key_1',
    );
    const coloured = prettyLine(json, { colour: true });
    expect(coloured).toContain('\u001b[36mINFO \u001b[0m');
    expect(coloured).toContain('\u001b[32m200\u001b[0m');
  });

  it('shows other entries as message and key=value, errors with their stack at ERROR', () => {
    const warn = JSON.stringify({
      level: 'WARN',
      message: 'Webhook delivery attempt failed',
      timestamp: '2026-11-22T10:04:05.123Z',
      delivery_id: 'dlv_1',
      error: 'timeout after 250 ms',
      status: null,
    });
    expect(prettyLine(warn, { colour: false })).toBe(
      '10:04:05.123 WARN  Webhook delivery attempt failed delivery_id=dlv_1 error="timeout after 250 ms" status=null',
    );
    const failed = JSON.stringify({
      level: 'ERROR',
      message: 'Handler failed',
      timestamp: '2026-11-22T10:04:05.123Z',
      error: { name: 'TypeError', message: 'x is undefined', stack: 'TypeError: x is undefined\n    at f (a.ts:1:1)' },
    });
    expect(prettyLine(failed, { colour: false }).split('\n')).toEqual([
      '10:04:05.123 ERROR Handler failed TypeError: x is undefined',
      '    at f (a.ts:1:1)',
    ]);
    expect(prettyLine('not json', { colour: false })).toBe('not json');
  });

  it('takes over what the logger prints, at its level', () => {
    const lines: string[] = [];
    const logger = new Logger({ serviceName: 'pretty-test', logLevel: 'INFO' });
    installPrettyLogs(logger, { colour: false }, (line) => lines.push(line));
    logger.info('request', {
      method: 'POST',
      path: '/v1/jobs/x/approve',
      status: 409,
      duration_ms: 3,
      request_id: 'req_1',
      shop_id: 'shop_2',
      key_id: 'key_3',
    });
    logger.warn('careful', { n: 1 });
    logger.debug('hidden');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/^\d\d:\d\d:\d\d\.\d{3} INFO {2}POST \/v1\/jobs\/x\/approve 409 3 ms req_1 shop_2 key_3$/);
    expect(lines[1]).toMatch(/ WARN {2}careful n=1$/);
  });
});
