import { jest } from '@jest/globals';
import type { V1ConfigMap } from '@kubernetes/client-node';
import {
  parseProbeReport,
  PROBE_REPORT_KEY,
  PROBE_REPORT_LABEL,
  PROBE_REPORT_MAX_UNHEALTHY,
  ProbeReportError,
} from '../../api/index.js';
import { Backoff } from '../../runtime/backoff.js';
import { silentLogger } from '../../runtime/log.js';
import { ProbeReportWriter, reportConfigMap, reportOf } from './report.js';

const POD = { namespace: 'capi-dns', name: 'capi-dns-server-abc', uid: 'uid-1' };
const at = new Date('2026-11-26T10:00:00Z');

describe('probe report', () => {
  it('lists the unhealthy targets sorted, bounded, and reads back as written', () => {
    const report = reportOf(3, [
      { id: 'tcp://10.0.0.2:80', since: at },
      { id: 'tcp://10.0.0.1:80', since: at },
    ]);
    expect(report).toEqual({
      probing: 3,
      unhealthy: [
        { target: 'tcp://10.0.0.1:80', since: '2026-11-26T10:00:00.000Z' },
        { target: 'tcp://10.0.0.2:80', since: '2026-11-26T10:00:00.000Z' },
      ],
    });
    const cm = reportConfigMap(POD, JSON.stringify(report));
    expect(cm.metadata?.name).toBe('capi-dns-probes-capi-dns-server-abc');
    expect(cm.metadata?.labels?.[PROBE_REPORT_LABEL]).toBe('true');
    expect(cm.metadata?.ownerReferences).toEqual([
      { apiVersion: 'v1', kind: 'Pod', name: 'capi-dns-server-abc', uid: 'uid-1' },
    ]);
    expect(parseProbeReport(cm.data![PROBE_REPORT_KEY]!)).toEqual(report);

    const many = Array.from({ length: PROBE_REPORT_MAX_UNHEALTHY + 5 }, (_, i) => ({
      id: `tcp://10.1.${i >> 8}.${i & 255}:80`,
      since: at,
    }));
    const bounded = reportOf(many.length, many);
    expect(bounded.unhealthy).toHaveLength(PROBE_REPORT_MAX_UNHEALTHY);
    expect(bounded.omitted).toBe(5);
  });

  it('refuses a report that is not one, saying what is wrong', () => {
    expect(() => parseProbeReport('{')).toThrow(ProbeReportError);
    expect(() => parseProbeReport('[]')).toThrow(/not an object/);
    expect(() => parseProbeReport('{"probing":-1,"unhealthy":[]}')).toThrow(/probing must be a count/);
    expect(() => parseProbeReport('{"probing":1,"unhealthy":[{"target":"x"}]}')).toThrow(
      /needs a target and a since/,
    );
  });
});

describe('ProbeReportWriter', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('writes a changed view once per debounce, nothing while nothing is probed, and retries a failed write', async () => {
    const applied: V1ConfigMap[] = [];
    let fail = false;
    const writer = new ProbeReportWriter({
      pod: POD,
      log: silentLogger,
      debounceMs: 1000,
      backoff: new Backoff({ minMs: 500, maxMs: 500 }),
      apply: async (cm) => {
        if (fail) throw new Error('503');
        applied.push(cm);
      },
    });
    writer.update(reportOf(0, []));
    await jest.advanceTimersByTimeAsync(2000);
    expect(applied).toHaveLength(0);

    writer.update(reportOf(2, []));
    writer.update(reportOf(2, [{ id: 'a', since: at }]));
    await jest.advanceTimersByTimeAsync(1000);
    expect(applied.map((c) => parseProbeReport(c.data![PROBE_REPORT_KEY]!).unhealthy.length)).toEqual([1]);

    // The same view again: no write.
    writer.update(reportOf(2, [{ id: 'a', since: at }]));
    await jest.advanceTimersByTimeAsync(2000);
    expect(applied).toHaveLength(1);

    fail = true;
    writer.update(reportOf(2, []));
    await jest.advanceTimersByTimeAsync(1000);
    expect(applied).toHaveLength(1);
    fail = false;
    await jest.advanceTimersByTimeAsync(500);
    expect(applied).toHaveLength(2);
    expect(parseProbeReport(applied[1]!.data![PROBE_REPORT_KEY]!).unhealthy).toEqual([]);
    writer.stop();
  });
});
