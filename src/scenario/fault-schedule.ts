import { faultSchema, type FaultFile } from './network-schema.js';

/**
 * A fault schedule as one line of text (`occusim run --faults '…'`, docs/scenario-format.md,
 * "Fault schedules"): the same data as a scenario's `faults:` block, compact enough to print as
 * a replay command and to shrink fault by fault.
 *
 *   schedule := fault { ';' fault }
 *   fault    := kind '@' at [ '+' duration ] [ ':' param { ',' param } ]
 *   param    := 'hive=' name | 'sensors=' name { '|' name } | 'webhook=' name | 'loss=' number
 *             | 'offset=' [ '+' | '-' ] duration
 *   name     := text without ; , : | = "   |   '"' text without " '"'
 *
 * e.g. `hive_outage@10m+5m:hive=Hive 1; broker_restart@20m; link_degradation@5m+2m:hive="Hive 1",loss=0.3;
 * clock_skew@1h+10m:hive=Hive 1,offset=-30s`.
 * A JSON array of `faults:` entries is accepted too (text starting with `[`). Every refusal
 * names the column it starts at, so a long schedule's mistake is found at a glance.
 */
export type ScheduleResult = { ok: true; faults: FaultFile[] } | { ok: false; col: number; message: string };

/** Bounds: a schedule is a command-line argument, not a data file. */
export const MAX_SCHEDULE_CHARS = 65_536;
export const MAX_SCHEDULE_FAULTS = 1_000;

const RESERVED = /[;,:|="]/;
const PARAMS = ['hive', 'sensors', 'webhook', 'loss', 'offset'] as const;
/** A signed duration, checked here so its refusal points at the value rather than the fault. */
const OFFSET = /^[+-]?(?:\d+(?:\.\d+)?d)?(?:\d+(?:\.\d+)?h)?(?:\d+(?:\.\d+)?m(?!s))?(?:\d+(?:\.\d+)?s)?(?:\d+ms)?$/;
type Param = (typeof PARAMS)[number];

class Refusal extends Error {
  constructor(
    readonly col: number,
    message: string,
  ) {
    super(message);
  }
}

/** Parses a schedule (text or JSON array); faults keep their order. */
export function parseFaultSchedule(text: string): ScheduleResult {
  if (text.length > MAX_SCHEDULE_CHARS)
    return {
      ok: false,
      col: MAX_SCHEDULE_CHARS + 1,
      message: `a schedule is at most ${MAX_SCHEDULE_CHARS} characters`,
    };
  try {
    const raw = text.trimStart().startsWith('[') ? fromJson(text) : fromText(text);
    if (raw.length > MAX_SCHEDULE_FAULTS)
      throw new Refusal(1, `a schedule holds at most ${MAX_SCHEDULE_FAULTS} faults, got ${raw.length}`);
    return { ok: true, faults: raw.map(({ fault, col }, i) => checked(fault, col, i)) };
  } catch (err) {
    if (err instanceof Refusal) return { ok: false, col: err.col, message: err.message };
    throw err;
  }
}

/** The schedule as text; `parseFaultSchedule(formatFaultSchedule(f))` gives `f` back. */
export function formatFaultSchedule(faults: readonly FaultFile[]): string {
  // A name with a double quote has no text form: the JSON form says the same.
  if (faults.some((f) => [f.hive ?? '', f.webhook ?? '', ...(f.sensors ?? [])].some((n) => n.includes('"'))))
    return JSON.stringify(faults);
  return faults
    .map((f) => {
      const params: string[] = [];
      if (f.hive !== undefined) params.push(`hive=${quoted(f.hive)}`);
      if (f.sensors !== undefined) params.push(`sensors=${f.sensors.map(quoted).join('|')}`);
      if (f.webhook !== undefined) params.push(`webhook=${quoted(f.webhook)}`);
      if (f.loss !== undefined) params.push(`loss=${f.loss}`);
      if (f.offset !== undefined) params.push(`offset=${f.offset}`);
      return `${f.kind}@${f.at}${f.duration !== undefined ? `+${f.duration}` : ''}${params.length > 0 ? `:${params.join(',')}` : ''}`;
    })
    .join('; ');
}

function quoted(name: string): string {
  return RESERVED.test(name) || name.trim() !== name || name === '' ? `"${name}"` : name;
}

function fromJson(text: string): Array<{ fault: unknown; col: number }> {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (err) {
    throw new Refusal(1, `not JSON: ${(err as Error).message}`);
  }
  if (!Array.isArray(data)) throw new Refusal(1, 'a JSON schedule is an array of faults');
  return data.map((fault) => ({ fault, col: 1 }));
}

function fromText(text: string): Array<{ fault: unknown; col: number }> {
  const out: Array<{ fault: unknown; col: number }> = [];
  const s = new Scanner(text);
  s.skipSpace();
  if (s.done()) return out;
  for (;;) {
    out.push(faultAt(s));
    s.skipSpace();
    if (s.done()) return out;
    s.expect(';');
    s.skipSpace();
  }
}

function faultAt(s: Scanner): { fault: unknown; col: number } {
  const col = s.col();
  const fault: Record<string, unknown> = { kind: s.word('a fault kind') };
  s.expect('@');
  fault['at'] = s.word('a start such as 10m');
  if (s.eat('+')) fault['duration'] = s.word('a duration such as 5m');
  if (s.eat(':')) {
    do {
      const at = s.col();
      const key = s.word(`a parameter (${PARAMS.join(', ')})`);
      if (!(PARAMS as readonly string[]).includes(key))
        throw new Refusal(at, `unknown parameter ${JSON.stringify(key)}: one of ${PARAMS.join(', ')}`);
      if (fault[key] !== undefined) throw new Refusal(at, `parameter ${key} given twice`);
      s.expect('=');
      fault[key] = paramValue(s, key as Param);
    } while (s.eat(','));
  }
  return { fault, col };
}

function paramValue(s: Scanner, key: Param): unknown {
  if (key === 'hive' || key === 'webhook') return s.name();
  if (key === 'sensors') {
    const names = [s.name()];
    while (s.eat('|')) names.push(s.name());
    return names;
  }
  const at = s.col();
  if (key === 'offset') {
    // '+' is not a word character (it starts a fault's duration), so an explicit plus is read apart.
    const word = (s.eat('+') ? '+' : '') + s.word('a signed duration such as -30s');
    if (!OFFSET.test(word) || /^[+-]?$/.test(word))
      throw new Refusal(at, `offset must be a signed duration such as -30s or +2m, got ${JSON.stringify(word)}`);
    return word;
  }
  const word = s.word('a number from 0 to 1');
  const n = Number(word);
  if (word === '' || !Number.isFinite(n))
    throw new Refusal(at, `loss must be a number from 0 to 1, got ${JSON.stringify(word)}`);
  return n;
}

/** Shape and ranges by the `faults:` block's own schema, refusals placed at the fault's column. */
function checked(fault: unknown, col: number, index: number): FaultFile {
  const r = faultSchema.safeParse(fault);
  if (r.success) return r.data;
  const issue = r.error.issues[0]!;
  const field = issue.path.length > 0 ? `.${issue.path.join('.')}` : '';
  throw new Refusal(col, `fault ${index + 1}${field}: ${issue.message}`);
}

/** A cursor over the schedule with 1-based columns for refusals. */
class Scanner {
  #i = 0;
  constructor(readonly text: string) {}

  col(): number {
    return this.#i + 1;
  }

  done(): boolean {
    return this.#i >= this.text.length;
  }

  skipSpace(): void {
    while (this.#i < this.text.length && /\s/.test(this.text[this.#i]!)) this.#i++;
  }

  eat(ch: string): boolean {
    this.skipSpace();
    if (this.text[this.#i] !== ch) return false;
    this.#i++;
    return true;
  }

  expect(ch: string): void {
    if (!this.eat(ch))
      throw new Refusal(
        this.col(),
        `expected ${JSON.stringify(ch)}${this.done() ? ' at the end' : `, found ${JSON.stringify(this.text[this.#i])}`}`,
      );
  }

  /** A token of letters, digits, `_`, `.` and `-` (kinds, durations, numbers, parameter names). */
  word(what: string): string {
    this.skipSpace();
    const start = this.#i;
    while (this.#i < this.text.length && /[\w.-]/.test(this.text[this.#i]!)) this.#i++;
    if (this.#i === start)
      throw new Refusal(
        this.col(),
        `expected ${what}${this.done() ? ' at the end' : `, found ${JSON.stringify(this.text[this.#i])}`}`,
      );
    return this.text.slice(start, this.#i);
  }

  /** A hive or sensor name: bare up to the next reserved character (trimmed), or "quoted". */
  name(): string {
    this.skipSpace();
    const start = this.#i;
    if (this.text[this.#i] === '"') {
      const end = this.text.indexOf('"', this.#i + 1);
      if (end < 0) throw new Refusal(start + 1, 'unterminated "');
      this.#i = end + 1;
      return this.text.slice(start + 1, end);
    }
    while (this.#i < this.text.length && !RESERVED.test(this.text[this.#i]!)) this.#i++;
    const name = this.text.slice(start, this.#i).trim();
    if (name === '') throw new Refusal(start + 1, 'expected a name');
    return name;
  }
}
