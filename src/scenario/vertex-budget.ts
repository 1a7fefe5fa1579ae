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

/** A node of the walk: its path is rebuilt from the parent links only for the finding. */
interface Step {
  node: unknown;
  key: Seg | null;
  parent: Step | null;
}

function pathOf(step: Step, last: Seg): Seg[] {
  const path: Seg[] = [last];
  for (let s: Step | null = step; s !== null && s.key !== null; s = s.parent) path.push(s.key);
  return path.reverse();
}

/**
 * A finding at the polygon that goes over the budget, or null within it. Linear in the tree
 * and small: a path per node (copied at every level) made a 499 × 500 sensor grid's walk
 * allocate ~2.5 M arrays (issue 33 item 13).
 */
export function vertexBudgetFinding(tree: unknown): Finding | null {
  let total = 0;
  const stack: Step[] = [{ node: tree, key: null, parent: null }];
  while (stack.length > 0) {
    const step = stack.pop() as Step;
    const node = step.node;
    if (typeof node !== 'object' || node === null) continue;
    if (Array.isArray(node)) {
      // Only objects and arrays can hold polygons: scalars (coordinates) are not visited.
      for (let i = node.length - 1; i >= 0; i--)
        if (typeof node[i] === 'object' && node[i] !== null) stack.push({ node: node[i], key: i, parent: step });
      continue;
    }
    for (const k in node) {
      if (!Object.hasOwn(node, k) || k === 'templates') continue; // template bodies count where they are used
      const v = (node as Record<string, unknown>)[k];
      if (POLYGON_KEYS.has(k) && Array.isArray(v)) {
        total += v.length;
        if (total > MAX_TOTAL_VERTICES) {
          return {
            path: pathOf(step, k),
            message: `polygons total more than ${MAX_TOTAL_VERTICES} vertices after expansion (geometry checks would take minutes)`,
            severity: 'error',
          };
        }
      } else if (typeof v === 'object' && v !== null) stack.push({ node: v, key: k, parent: step });
    }
  }
  return null;
}
