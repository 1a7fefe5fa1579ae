import type { Finding, Seg } from './diagnostics.js';

/**
 * The geometry checks cost about (vertices of a polygon) × (vertices of its container) per
 * polygon, and repeats multiply polygons without growing the file: 220 rooms of 1000
 * vertices took 55 s and 1 GB to validate, 200,000 vertices of 250-vertex rooms 10.6 s. So every polygon has at most
 * `MAX_POLYGON_VERTICES` (the schema) and the expanded scenario at most
 * `MAX_TOTAL_VERTICES` (here, before any check runs): fleet.yaml has ~3,600.
 */
export const MAX_TOTAL_VERTICES = 50_000;

const POLYGON_KEYS = new Set(['polygon', 'outline']);

/** A finding at the polygon that goes over the budget, or null within it. */
export function vertexBudgetFinding(tree: unknown): Finding | null {
  let total = 0;
  const stack: Array<{ node: unknown; path: Seg[] }> = [{ node: tree, path: [] }];
  while (stack.length > 0) {
    const { node, path } = stack.pop() as { node: unknown; path: Seg[] };
    if (typeof node !== 'object' || node === null) continue;
    if (Array.isArray(node)) {
      for (let i = node.length - 1; i >= 0; i--) stack.push({ node: node[i], path: [...path, i] });
      continue;
    }
    for (const [k, v] of Object.entries(node)) {
      if (k === 'templates') continue; // template bodies count where they are used
      if (POLYGON_KEYS.has(k) && Array.isArray(v)) {
        total += v.length;
        if (total > MAX_TOTAL_VERTICES) {
          return { path: [...path, k], message: `polygons total more than ${MAX_TOTAL_VERTICES} vertices after expansion (geometry checks would take minutes)`, severity: 'error' };
        }
      } else stack.push({ node: v, path: [...path, k] });
    }
  }
  return null;
}
