import { WatchHolds } from './watch-holds.js';

describe('WatchHolds', () => {
  it.each([
    [
      'one holder takes and lets go',
      [
        ['gw1', ['a|ns']],
        ['gw1', []],
      ],
      [[], ['a|ns']],
      [],
    ],
    [
      'a shared watch is released only by its last holder',
      [
        ['gw1', ['a|ns', 'b|ns']],
        ['gw2', ['a|ns']],
        ['gw1', ['b|ns']],
        ['gw2', []],
      ],
      [[], [], [], ['a|ns']],
      ['b|ns'],
    ],
    [
      'holding again changes nothing',
      [
        ['gw1', ['a|ns']],
        ['gw1', ['a|ns']],
      ],
      [[], []],
      ['a|ns'],
    ],
    [
      'moving to another namespace releases the old one',
      [
        ['gw1', ['a|ns1']],
        ['gw1', ['a|ns2']],
      ],
      [[], ['a|ns1']],
      ['a|ns2'],
    ],
  ] as const)('%s', (_what, steps, released, held) => {
    const holds = new WatchHolds();
    expect(steps.map(([holder, items]) => holds.set(holder, items))).toEqual(released);
    expect(holds.held()).toEqual(held);
  });

  it('drop releases everything the holder alone held', () => {
    const holds = new WatchHolds();
    holds.set('gw1', ['a|ns', 'b|ns']);
    holds.set('gw2', ['b|ns']);
    expect(holds.drop('gw1')).toEqual(['a|ns']);
    expect(holds.drop('gw1')).toEqual([]);
  });
});
