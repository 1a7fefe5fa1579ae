import type { Asset, AssetKind, Catalog } from './catalog.js';

/**
 * Fuzzy matching of asset names, shared by the search tool, the reference's `space_id_or_name`
 * arguments (aliases.ts) and `completion/complete` (completion.ts): one scoring, so an
 * assistant that finds "Kitchen" with one gets the same space with the others. Score 1 for an
 * exact name, then prefix 0.9, word prefix 0.8, substring 0.7, and finally bigram similarity
 * (Dice, scaled by 0.65) for misspellings; below 0.45 similarity is no match (0).
 */
const norm = (s: string): string =>
  s
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, ' ')
    .trim();

function bigrams(s: string): Map<string, number> {
  const m = new Map<string, number>();
  const t = ` ${s} `;
  for (let i = 0; i < t.length - 1; i++) m.set(t.slice(i, i + 2), (m.get(t.slice(i, i + 2)) ?? 0) + 1);
  return m;
}

function dice(a: Map<string, number>, b: Map<string, number>): number {
  let common = 0;
  let total = 0;
  for (const [g, n] of a) {
    common += Math.min(n, b.get(g) ?? 0);
    total += n;
  }
  for (const n of b.values()) total += n;
  return total === 0 ? 0 : (2 * common) / total;
}

export function matchScore(query: string, name: string): number {
  const q = norm(query);
  const n = norm(name);
  if (q === '' || n === '') return 0;
  if (n === q) return 1;
  if (n.startsWith(q)) return 0.9;
  if (n.split(' ').some((w) => w.startsWith(q))) return 0.8;
  if (n.includes(q)) return 0.7;
  // Best bigram similarity against the whole name or any run of as many words as the query has.
  const words = n.split(' ');
  const span = Math.max(1, q.split(' ').length);
  const qb = bigrams(q);
  let best = dice(qb, bigrams(n));
  for (let i = 0; i + span <= words.length; i++)
    best = Math.max(best, dice(qb, bigrams(words.slice(i, i + span).join(' '))));
  return best >= 0.45 ? Math.round(best * 0.65 * 1000) / 1000 : 0;
}

export interface Ranked {
  asset: Asset;
  score: number;
}

/**
 * Assets of the kinds whose name (or id) matches `query`, best first; ties by path then id, so
 * the order is the same on every call. Each distinct name is scored once (the fleet's 30,300
 * sensors have a few hundred names).
 */
export function rankByName(catalog: Catalog, query: string, kinds: readonly AssetKind[]): Ranked[] {
  const byName = new Map<string, number>();
  const out: Ranked[] = [];
  for (const a of catalog.assets.values()) {
    if (!kinds.includes(a.kind)) continue;
    let s = byName.get(a.name);
    if (s === undefined) byName.set(a.name, (s = matchScore(query, a.name)));
    const score = Math.max(s, a.id === query ? 1 : a.id.startsWith(query) && query.length >= 3 ? 0.9 : 0);
    if (score > 0) out.push({ asset: a, score });
  }
  const path = (a: Asset): string => a.path.join(' › ');
  return out.sort(
    (x, y) => y.score - x.score || path(x.asset).localeCompare(path(y.asset)) || (x.asset.id < y.asset.id ? -1 : 1),
  );
}
