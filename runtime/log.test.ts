import { createLogger, errorText } from './log.js';

function captured(level: Parameters<typeof createLogger>[0] = 'info') {
  const lines: Record<string, unknown>[] = [];
  const log = createLogger(level, { component: 'test' }, (line) => void lines.push(JSON.parse(line)));
  return { log, lines };
}

describe('createLogger', () => {
  it('writes one JSON object a line with ts, level, msg, the base and the fields', () => {
    const { log, lines } = captured();
    log.info('record set written', { cluster: 'dev-team/cluster-a', recordset: 'x' });
    expect(lines).toHaveLength(1);
    const [line] = lines;
    expect(line).toMatchObject({
      level: 'info',
      msg: 'record set written',
      component: 'test',
      cluster: 'dev-team/cluster-a',
      recordset: 'x',
    });
    expect(new Date(line!['ts'] as string).toISOString()).toBe(line!['ts']);
    expect(line).not.toHaveProperty('pid');
    expect(line).not.toHaveProperty('hostname');
  });

  it('drops lines below its level', () => {
    const { log, lines } = captured('warn');
    log.debug('a');
    log.info('b');
    log.warn('c');
    log.error('d');
    expect(lines.map((l) => [l['level'], l['msg']])).toEqual([
      ['warn', 'c'],
      ['error', 'd'],
    ]);
  });

  it('writes an Error in the fields as its text, with the cause', () => {
    const { log, lines } = captured();
    log.error('reconcile failed', {
      error: new Error('apply DNSRecordSet', { cause: new Error('HTTP 409') }),
    });
    expect(lines[0]!['error']).toBe('apply DNSRecordSet: HTTP 409');
  });

  it('with() adds fields to every later line, and nests', () => {
    const { log, lines } = captured();
    const perCluster = log.with({ cluster: 'dev-team/cluster-b' }).with({ gatewaydns: 'dev-team/gw' });
    perCluster.warn('unreachable', { error: new Error('ECONNREFUSED') });
    expect(lines[0]).toMatchObject({
      component: 'test',
      cluster: 'dev-team/cluster-b',
      gatewaydns: 'dev-team/gw',
      error: 'ECONNREFUSED',
    });
  });
});

describe('errorText', () => {
  it("prefers the API server's message of a client-node error", () => {
    const err = Object.assign(new Error('HTTP-Code: 422'), {
      code: 422,
      body: JSON.stringify({ kind: 'Status', message: 'spec.values: Too many' }),
    });
    expect(errorText(err)).toBe('HTTP 422: spec.values: Too many');
    expect(errorText('plain')).toBe('plain');
  });
});
