/**
 * Text a person is shown (a terminal, Studio), with what it could hide made visible: control
 * characters other than newline and tab (a carriage return or an escape sequence can overwrite or
 * hide what was printed before it, set the clipboard, or change the title) and the bidirectional
 * controls that reorder what a line shows (Trojan Source). Each is shown as its code (`\x1b`,
 * `\u202e`). The one place for it: approval questions, the model's replies, report lines, the
 * timeline, `keel diff` and `keel undo`, error messages; and the names the file tools refuse.
 */

/** Whether a UTF-16 code unit can hide or reorder what a terminal shows. */
const hides = (code: number) =>
  (code < 0x20 && code !== 0x0a && code !== 0x09) ||
  (code >= 0x7f && code <= 0x9f) ||
  code === 0x061c ||
  code === 0x200e ||
  code === 0x200f ||
  (code >= 0x202a && code <= 0x202e) ||
  (code >= 0x2066 && code <= 0x2069);

/** How a hiding character is shown: its code (`\x1b`, `\u202e`). */
const codeOf = (code: number) =>
  code <= 0xff
    ? `\\x${code.toString(16).padStart(2, "0")}`
    : `\\u${code.toString(16).padStart(4, "0")}`;

/** `text` with every character that could hide what it shows written as its code. */
export function printable(text: string): string {
  let out = "";
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    out += !hides(code) ? text[i] : codeOf(code);
  }
  return out;
}

/**
 * The first character of a name that could hide or reorder what a person is shown (a control
 * character — newline and tab too — or a bidirectional control), with its place (0-based) and its
 * code; none for a name of visible characters.
 */
export function hiddenInName(name: string): { at: number; code: string } | undefined {
  for (let i = 0; i < name.length; i++) {
    const code = name.charCodeAt(i);
    if (hides(code) || code === 0x0a || code === 0x09) return { at: i, code: codeOf(code) };
  }
  return undefined;
}

/** A name (a file's) on one line: `printable`, its newlines and tabs as codes too. */
export const printableName = (name: string): string =>
  printable(name).replace(/\n/g, "\\n").replace(/\t/g, "\\t");
