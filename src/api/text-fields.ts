/**
 * Checks for the free text callers give names and descriptions (clients, spaces, devices).
 * Names end up in terminals, CSV exports, event metadata and other tools' UIs, so a name may
 * not carry control characters (a NUL cuts it short in C consumers, a newline forges lines,
 * ESC drives the terminal) nor bidirectional formatting characters (U+202E shows
 * "txt.exe" for "exe.txt": the "Trojan Source" trick), and nothing may be an unpaired
 * surrogate (not encodable as UTF-8). Descriptions may hold line breaks and tabs.
 * Each check returns why the text is refused, naming the field and the position, or null.
 */
export const MAX_NAME_CHARS = 200;
export const MAX_DESCRIPTION_CHARS = 1000;

/** Bidirectional embedding, override and isolate controls, and the implicit marks. */
const BIDI = /[\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/;
/** C0 and C1 controls and DEL (finding them is the point of these patterns). */
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001F\u007F-\u009F]/;
/** The same without tab, line feed and carriage return. */
// eslint-disable-next-line no-control-regex
const CONTROL_BUT_LINES = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F]/;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

const codePoint = (ch: string): string => `U+${(ch.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0')}`;

function refused(text: string, field: string, pattern: RegExp, what: string): string | null {
  const m = pattern.exec(text);
  return m ? `${field} must not contain ${what} (${codePoint(m[0])} at position ${m.index})` : null;
}

function characters(text: string, field: string, control: RegExp): string | null {
  return (
    refused(text, field, control, 'control characters') ??
    refused(text, field, BIDI, 'bidirectional formatting characters') ??
    refused(text, field, LONE_SURROGATE, 'unpaired surrogates (invalid UTF-16)')
  );
}

/** A name: non-empty after trimming, at most MAX_NAME_CHARS, no control or bidi characters. */
export function nameProblem(name: string, field = 'name'): string | null {
  if (name.trim() === '') return `${field} must not be empty`;
  if (name.length > MAX_NAME_CHARS) return `${field} must be at most ${MAX_NAME_CHARS} characters (got ${name.length})`;
  return characters(name, field, CONTROL);
}

/** A description: at most MAX_DESCRIPTION_CHARS; line breaks and tabs allowed, other controls and bidi characters not. */
export function descriptionProblem(text: string, field = 'description'): string | null {
  if (text.length > MAX_DESCRIPTION_CHARS)
    return `${field} must be at most ${MAX_DESCRIPTION_CHARS} characters (got ${text.length})`;
  return characters(text, field, CONTROL_BUT_LINES);
}
