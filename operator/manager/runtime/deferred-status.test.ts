import { createLogger } from './log.js';
import { withDeferredStatus } from './deferred-status.js';

function logged(): { log: ReturnType<typeof createLogger>; lines: string[] } {
  const lines: string[] = [];
  return { log: createLogger('info', {}, (line) => lines.push(line)), lines };
}

describe('withDeferredStatus', () => {
  it('writes the status once after phases that succeed, and returns their result', async () => {
    const { log } = logged();
    const writes: string[] = [];
    await expect(
      withDeferredStatus(
        async () => 7,
        async () => writes.push('status'),
        log,
      ),
    ).resolves.toBe(7);
    expect(writes).toEqual(['status']);
  });

  it('writes the status after phases that fail, and keeps their error; a failed write beside it is logged', async () => {
    const { log, lines } = logged();
    await expect(
      withDeferredStatus(
        async () => {
          throw new Error('record set not written');
        },
        async () => {
          throw new Error('conflict');
        },
        log,
      ),
    ).rejects.toThrow('record set not written');
    expect(lines.map((l) => JSON.parse(l) as { msg: string; error: string })).toEqual([
      expect.objectContaining({ msg: 'status not written', error: 'conflict' }),
    ]);
  });

  it("fails with the status write's error when the phases succeeded", async () => {
    const { log } = logged();
    await expect(
      withDeferredStatus(
        async () => 1,
        async () => {
          throw new Error('conflict');
        },
        log,
      ),
    ).rejects.toThrow('conflict');
  });
});
