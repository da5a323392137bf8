import { servingOrder } from './tcp-connections.js';

const waiting = (name: string, octets: number) => ({ name, waitingOctets: () => octets });

describe('servingOrder', () => {
  it('serves the connection with the fewest octets waiting first', () => {
    const burster = waiting('burster', 66_000);
    const newcomer = waiting('newcomer', 31);
    const pipeliner = waiting('pipeliner', 620);
    expect(servingOrder([burster, pipeliner, newcomer]).map((c) => c.name)).toEqual([
      'newcomer',
      'pipeliner',
      'burster',
    ]);
  });

  it('keeps arrival order among equals, so that no connection with the same load overtakes another', () => {
    const ready = new Set(['a', 'b', 'c', 'd'].map((n) => waiting(n, 31)));
    expect(servingOrder(ready).map((c) => c.name)).toEqual(['a', 'b', 'c', 'd']);
  });

  it('returns a copy, leaving the queue as it was', () => {
    const ready = [waiting('big', 2), waiting('small', 1)];
    servingOrder(ready);
    expect(ready.map((c) => c.name)).toEqual(['big', 'small']);
  });
});
