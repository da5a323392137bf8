import { jest } from '@jest/globals';
import type { V1ConfigMap } from '@kubernetes/client-node';
import { parseServedSerials, SERVED_SERIALS_KEY, SERVED_SERIALS_LABEL } from '../../api/index.js';
import { silentLogger } from '../../runtime/log.js';
import { SerialReportWriter, servedSerialsOf } from './serial-report.js';

const POD = { namespace: 'capi-dns', name: 'capi-dns-server-abc', uid: 'uid-1' };

describe('served serials of a replica', () => {
  it('lists the served zones that are declared, names as the operator writes them', () => {
    expect(
      servedSerialsOf(
        ['xcc.test', 'Apps.Corp.Internal.', 'shop.apps.corp.internal'],
        ['apps.corp.internal'],
        7,
      ),
    ).toEqual({
      zones: { 'apps.corp.internal': 7 },
    });
  });

  describe('SerialReportWriter', () => {
    beforeEach(() => jest.useFakeTimers());
    afterEach(() => jest.useRealTimers());

    it('writes nothing until a zone is declared, then each new serial once per debounce, and the empty list once a zone is no longer declared', async () => {
      const applied: V1ConfigMap[] = [];
      const writer = new SerialReportWriter({
        pod: POD,
        log: silentLogger,
        debounceMs: 1000,
        apply: async (cm) => void applied.push(cm),
      });
      const zones = () => applied.map((c) => parseServedSerials(c.data![SERVED_SERIALS_KEY]!).zones);
      writer.loaded(['xcc.test'], 100);
      await jest.advanceTimersByTimeAsync(2000);
      expect(applied).toHaveLength(0);

      writer.setDeclared(['apps.corp.internal']);
      writer.loaded(['xcc.test', 'apps.corp.internal'], 101);
      writer.loaded(['xcc.test', 'apps.corp.internal'], 102);
      await jest.advanceTimersByTimeAsync(1000);
      expect(zones()).toEqual([{ 'apps.corp.internal': 102 }]);
      expect(applied[0]!.metadata).toMatchObject({
        name: 'capi-dns-serials-capi-dns-server-abc',
        namespace: 'capi-dns',
        labels: { [SERVED_SERIALS_LABEL]: 'true' },
        ownerReferences: [{ kind: 'Pod', name: POD.name, uid: POD.uid }],
      });

      // The same again (the declaration handed over anew): no write.
      writer.setDeclared(['apps.corp.internal']);
      await jest.advanceTimersByTimeAsync(2000);
      expect(applied).toHaveLength(1);

      writer.setDeclared([]);
      await jest.advanceTimersByTimeAsync(1000);
      expect(zones()).toEqual([{ 'apps.corp.internal': 102 }, {}]);
      await writer.stop();
    });
  });
});
