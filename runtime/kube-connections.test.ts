import { withUserAgent } from './kube-connections.js';

describe('withUserAgent: the User-Agent replaced in every shape undici hands headers in', () => {
  const ua = 'capi-dns-controller (replica-a)';
  it.each([
    [
      'an object',
      { 'User-Agent': 'kubernetes-client-javascript/2.0.1', accept: 'application/json' },
      { accept: 'application/json', 'user-agent': ua },
    ],
    ['no headers', undefined, { 'user-agent': ua }],
    [
      'pairs',
      [
        ['user-agent', 'x'],
        ['accept', 'a'],
      ],
      [
        ['accept', 'a'],
        ['user-agent', ua],
      ],
    ],
    ['a flat list', ['accept', 'a', 'USER-AGENT', 'x'], ['accept', 'a', 'user-agent', ua]],
  ])('%s', (_shape, headers, want) => {
    expect(withUserAgent(headers as Parameters<typeof withUserAgent>[0], ua)).toEqual(want);
  });
});
