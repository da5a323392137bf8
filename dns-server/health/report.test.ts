import { jest } from '@jest/globals';
import type { V1ConfigMap } from '@kubernetes/client-node';
import {
  parseProbeReport,
  PROBE_REPORT_KEY,
  PROBE_REPORT_LABEL,
  PROBE_REPORT_MAX_UNHEALTHY,
  ProbeReportError,
  probeReportName,
} from '../../api/index.js';
import { Backoff } from '../../runtime/backoff.js';
import { createLogger, silentLogger } from '../../runtime/log.js';
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
    await writer.stop();
  });

  describe('a replica without --pod-uid (no owner to delete its report)', () => {
    const NO_UID = { ...POD, uid: undefined };
    const writerWith = (remove: (cm: V1ConfigMap) => Promise<void>, apply = async () => {}) =>
      new ProbeReportWriter({ pod: NO_UID, log: silentLogger, debounceMs: 1000, apply, remove });

    it('removes what it wrote when it stops, and nothing when it wrote nothing', async () => {
      const removed: (string | undefined)[] = [];
      const remove = async (cm: V1ConfigMap) => void removed.push(cm.metadata?.name);
      const quiet = writerWith(remove);
      await quiet.stop();
      expect(removed).toEqual([]);

      const writer = writerWith(remove);
      writer.update(reportOf(1, []));
      await jest.advanceTimersByTimeAsync(1000);
      await writer.stop();
      expect(removed).toEqual([probeReportName(POD.name)]);
    });

    it('lets a write under way finish before removing, so that the write does not bring it back', async () => {
      const events: string[] = [];
      let finishWrite: () => void = () => {};
      const writer = writerWith(
        async () => void events.push('removed'),
        () =>
          new Promise<void>((resolve) => {
            events.push('writing');
            finishWrite = () => {
              events.push('written');
              resolve();
            };
          }),
      );
      writer.update(reportOf(1, []));
      await jest.advanceTimersByTimeAsync(1000);
      const stopped = writer.stop();
      await jest.advanceTimersByTimeAsync(100);
      expect(events).toEqual(['writing']);
      finishWrite();
      await stopped;
      expect(events).toEqual(['writing', 'written', 'removed']);
    });

    it('stops within seconds when the API server does not answer the delete, and says so', async () => {
      const lines: string[] = [];
      const writer = new ProbeReportWriter({
        pod: NO_UID,
        log: createLogger('info', {}, (l) => void lines.push(l)),
        debounceMs: 1000,
        apply: async () => {},
        remove: () => new Promise<void>(() => {}),
      });
      writer.update(reportOf(1, []));
      await jest.advanceTimersByTimeAsync(1000);
      const stopped = writer.stop();
      await jest.advanceTimersByTimeAsync(3000);
      await stopped;
      expect(lines.join('\n')).toContain('probe report not removed');
    });
  });
});
