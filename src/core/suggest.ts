/**
 * Did-you-mean for misspelt names: the scenario loader's unknown fields and the API's unknown
 * request keys answer with the closest known name when it is a plausible typo.
 */
const MAX_SUGGEST_LENGTH = 64;

/** Levenshtein distance, O(|a|·|b|): only ever called on short names. */
export function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      cur.push(Math.min((prev[j] ?? 0) + 1, (cur[j - 1] ?? 0) + 1, (prev[j - 1] ?? 0) + cost));
    }
    prev = cur;
  }
  return prev[b.length] ?? 0;
}

/**
 * The candidate closest to `name`, when close enough to be a plausible typo (distance at
 * most a third of the longer name, and at least 1 edit allowed), else null.
 */
export function closest(name: string, candidates: Iterable<string>): string | null {
  // editDistance is quadratic: a 100,000-character name against 600 zones took 7 s. No typo is that long.
  if (name.length > MAX_SUGGEST_LENGTH) return null;
  let best: string | null = null;
  let bestD = Infinity;
  const lower = name.toLowerCase();
  for (const c of candidates) {
    const d = editDistance(lower, c.toLowerCase());
    if (d < bestD) {
      best = c;
      bestD = d;
    }
  }
  if (best === null) return null;
  const limit = Math.max(1, Math.floor(Math.max(name.length, best.length) / 3));
  return bestD <= limit ? best : null;
}

/** ` Did you mean `x`?` or '' (ready to append to a message). */
export function didYouMean(name: string, candidates: Iterable<string>): string {
  const c = closest(name, candidates);
  return c === null ? '' : `; did you mean \`${c}\`?`;
}
