/**
 * Yields the items of `items`, removing each from the array as it goes: for the build's large,
 * single-use lists, so that what was already turned into the next structure can be collected
 * while the rest is still being worked through (the peak is then the larger of the two, not both).
 */
export function* consume<T>(items: (T | undefined)[]): Generator<T> {
  for (let i = 0; i < items.length; i++) {
    const item = items[i] as T;
    items[i] = undefined;
    yield item;
  }
}
