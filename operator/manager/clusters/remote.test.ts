import { notAnswering } from './remote.js';

describe('notAnswering: which watch failures make the whole cluster unreachable', () => {
  it.each<[number | undefined, boolean, string]>([
    [undefined, true, 'no HTTP answer: refused, reset, timed out'],
    [429, true, 'storage (re)initialising, or priority and fairness turning us away'],
    [500, true, 'the API server failed'],
    [503, true, 'the API server is not ready'],
    [403, false, 'RBAC forbids this one resource'],
    [404, false, 'a CRD not installed'],
    [410, false, 'a watch that must re-list'],
  ])('status %p → %p (%s)', (status, want) => {
    expect(notAnswering(status)).toBe(want);
  });
});
