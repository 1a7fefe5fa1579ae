/**
 * Items grouped by a key in one pass, each group in the items' order: the way start-up code
 * finds a hive's sensors or a floor's rooms without scanning the whole fleet per hive or
 * per floor (cost linear in the fleet, not in hives × sensors).
 */
export function groupBy<T, K>(items: Iterable<T>, key: (item: T) => K): Map<K, T[]> {
  const out = new Map<K, T[]>();
  for (const item of items) {
    const k = key(item);
    const list = out.get(k);
    if (list) list.push(item);
    else out.set(k, [item]);
  }
  return out;
}
