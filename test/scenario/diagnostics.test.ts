import { describe, expect, it } from 'vitest';
import {
  closest,
  editDistance,
  formatDiagnostic,
  formatPath,
  sortDiagnostics,
  type Diagnostic,
} from '../../src/scenario/diagnostics.js';

const d = (line: number, col: number, severity: Diagnostic['severity'] = 'error'): Diagnostic => ({
  file: 'a.yaml',
  line,
  col,
  path: 'sites[0].name',
  message: 'm',
  severity,
});

describe('diagnostics', () => {
  it('formats as file:line:col path: message, warnings marked', () => {
    expect(formatDiagnostic(d(3, 7))).toBe('a.yaml:3:7 sites[0].name: m');
    expect(formatDiagnostic(d(3, 7, 'warning'))).toBe('a.yaml:3:7 sites[0].name: warning: m');
    expect(formatDiagnostic({ ...d(1, 1), path: '' })).toBe('a.yaml:1:1: m');
  });

  it('writes paths with indices and quotes odd keys', () => {
    expect(formatPath(['sites', 0, 'buildings', 1, 'floors', 2, 'rooms', 3, 'polygon'])).toBe(
      'sites[0].buildings[1].floors[2].rooms[3].polygon',
    );
    expect(formatPath(['templates', 'my floor'])).toBe('templates["my floor"]');
  });

  it('sorts by line then column', () => {
    expect(sortDiagnostics([d(5, 1), d(2, 9), d(2, 3)]).map((x) => `${x.line}:${x.col}`)).toEqual([
      '2:3',
      '2:9',
      '5:1',
    ]);
  });

  it('suggests only plausible typos', () => {
    expect(editDistance('kitten', 'sitting')).toBe(3);
    expect(closest('feild_of_view', ['field_of_view', 'height'])).toBe('field_of_view');
    expect(closest('xyz', ['field_of_view', 'height'])).toBeNull();
  });
});
