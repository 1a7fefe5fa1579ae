/**
 * A floor plan as SVG (the `occusim://floors/<id>/plan.svg` resource): the outline, rooms and
 * zones (dashed) as polygons with their names, hives as triangles and sensors as squares
 * (presence blue, traffic purple), at a fixed 40 px per metre. Built from the same data as
 * `plan.json`, so the two never disagree; names are escaped, numbers rounded to 0.1 px, so the
 * same floor draws the same bytes.
 */
export interface Plan {
  id: string;
  name: string;
  outline: number[][];
  rooms: Array<{ id: string; name: string; coordinates: number[][] }>;
  zones: Array<{ id: string; name: string; room_id: string | null; coordinates: number[][] }>;
  hives: Array<{ id: string; name: string; coordinates: number[] | null }>;
  sensors: Array<{ id: string; name: string; mode: string; center: number[] }>;
}

const PX_PER_M = 40;
const MARGIN = 20;

const esc = (s: string): string =>
  s.replace(/[<>&"']/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;', "'": '&#39;' })[c] as string);
const r1 = (x: number): string => String(Math.round(x * 10) / 10);

export function planSvg(p: Plan): string {
  const points = [
    ...p.outline,
    ...p.rooms.flatMap((r) => r.coordinates),
    ...p.zones.flatMap((z) => z.coordinates),
    ...p.sensors.map((s) => s.center),
    ...p.hives.flatMap((h) => (h.coordinates ? [h.coordinates] : [])),
  ];
  const xs = points.map((q) => q[0] ?? 0);
  const ys = points.map((q) => q[1] ?? 0);
  const minX = xs.length > 0 ? Math.min(...xs) : 0;
  const minY = ys.length > 0 ? Math.min(...ys) : 0;
  const w = (xs.length > 0 ? Math.max(...xs) - minX : 1) * PX_PER_M + 2 * MARGIN;
  const h = (ys.length > 0 ? Math.max(...ys) - minY : 1) * PX_PER_M + 2 * MARGIN;
  const x = (v: number | undefined): string => r1(((v ?? 0) - minX) * PX_PER_M + MARGIN);
  const y = (v: number | undefined): string => r1(((v ?? 0) - minY) * PX_PER_M + MARGIN);
  const poly = (c: number[][]): string => c.map((q) => `${x(q[0])},${y(q[1])}`).join(' ');
  const centre = (c: number[][]): [number, number] => [
    c.reduce((s, q) => s + (q[0] ?? 0), 0) / Math.max(1, c.length),
    c.reduce((s, q) => s + (q[1] ?? 0), 0) / Math.max(1, c.length),
  ];
  const out = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${r1(w)}" height="${r1(h)}" viewBox="0 0 ${r1(w)} ${r1(h)}" font-family="sans-serif" font-size="11">`,
    `<title>${esc(p.name)}</title>`,
  ];
  if (p.outline.length > 0)
    out.push(`<polygon points="${poly(p.outline)}" fill="#fafafa" stroke="#333" stroke-width="2"/>`);
  for (const r of p.rooms) {
    const [cx, cy] = centre(r.coordinates);
    out.push(
      `<g id="${esc(r.id)}"><polygon points="${poly(r.coordinates)}" fill="#eef3f8" stroke="#567"/><text x="${x(cx)}" y="${y(cy)}" text-anchor="middle">${esc(r.name)}</text></g>`,
    );
  }
  for (const z of p.zones)
    out.push(
      `<g id="${esc(z.id)}"><polygon points="${poly(z.coordinates)}" fill="none" stroke="#789" stroke-dasharray="4 3"/></g>`,
    );
  for (const hv of p.hives) {
    if (!hv.coordinates) continue;
    const [hx, hy] = [Number(x(hv.coordinates[0])), Number(y(hv.coordinates[1]))];
    out.push(
      `<polygon id="${esc(hv.id)}" points="${r1(hx)},${r1(hy - 6)} ${r1(hx - 6)},${r1(hy + 5)} ${r1(hx + 6)},${r1(hy + 5)}" fill="#2a7"><title>${esc(hv.name)}</title></polygon>`,
    );
  }
  for (const s of p.sensors) {
    const [sx, sy] = [Number(x(s.center[0])), Number(y(s.center[1]))];
    out.push(
      `<rect id="${esc(s.id)}" x="${r1(sx - 4)}" y="${r1(sy - 4)}" width="8" height="8" fill="${s.mode === 'traffic' ? '#74a' : '#36c'}"><title>${esc(s.name)}</title></rect>`,
    );
  }
  out.push('</svg>');
  return out.join('\n');
}
