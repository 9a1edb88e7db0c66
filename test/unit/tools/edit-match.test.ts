/** edit_file's matching cascade: exact, whitespace, indentation, escapes, anchors; CRLF and the last newline kept. */
import { describe, expect, it } from "vitest";
import { applyEdit, reindent, unescape } from "../../../src/tools/edit-match.js";
import { PY } from "../../support/tools.js";

describe("the matching cascade", () => {
  it("applies an exact match and keeps everything else byte for byte", () => {
    const r = applyEdit(PY, "        return len(items)", "        return len(list(items))");
    expect(r).toMatchObject({ ok: true, step: "exact", place: { from: 9, to: 9 }, note: "" });
    expect(r.ok && r.text).toBe(PY.replace("len(items)", "len(list(items))"));
  });

  it("ignores trailing whitespace the model added or dropped", () => {
    const file = "a = 1   \nb = 2\t\nc = 3\n";
    const r = applyEdit(file, "a = 1\nb = 2", "a = 10\nb = 20");
    expect(r).toMatchObject({ ok: true, step: "whitespace", place: { from: 1, to: 2 } });
    expect(r.ok && r.text).toBe("a = 10\nb = 20\nc = 3\n");
  });

  it("matches with the wrong indentation and re-indents the new text to the file's", () => {
    // the model dropped the method's indentation and used 2 spaces for the body
    const old = "def total(self, items):\n  s = 0\n  for i in items:\n    s += i.price\n  return s";
    const next =
      "def total(self, items):\n  s = 0\n  for i in items:\n    if i.price > 0:\n      s += i.price\n  return s";
    const r = applyEdit(PY, old, next);
    expect(r).toMatchObject({ ok: true, step: "indentation", place: { from: 2, to: 6 } });
    expect(r.ok && r.note).toContain("normalising indentation");
    expect(r.ok && r.text.split("\n").slice(1, 8)).toEqual([
      "    def total(self, items):",
      "        s = 0",
      "        for i in items:",
      "            if i.price > 0:",
      "                s += i.price",
      "        return s",
      "",
    ]);
  });

  it("reads escapes a model wrote out literally, in old and new text alike", () => {
    const file = 'print("hi")\nx = 1\n';
    const r = applyEdit(file, 'print(\\"hi\\")\\nx = 1', 'print(\\"bye\\")\\nx = 2');
    expect(r).toMatchObject({ ok: true, step: "escapes" });
    expect(r.ok && r.text).toBe('print("bye")\nx = 2\n');
    expect(unescape("a\\tb\\\\n")).toBe("a\tb\\n");
  });

  it("anchors on the first and last lines when a middle line drifted, and shows what it replaced", () => {
    const file = "function f(a, b) {\n  const sum = a + b;\n  return sum;\n}\n";
    const r = applyEdit(
      file,
      "function f(a, b) {\n  const sum = a+b;\n  return sum;\n}",
      "function f(a, b) {\n  return a + b;\n}",
    );
    expect(r).toMatchObject({ ok: true, step: "anchors", place: { from: 1, to: 4 } });
    expect(r.ok && r.note).toContain("const sum = a + b;");
    expect(r.ok && r.text).toBe("function f(a, b) {\n  return a + b;\n}\n");
  });

  it("does not anchor when the middle is not alike", () => {
    const file = "if (x) {\n  launchRockets();\n}\n";
    const r = applyEdit(file, "if (x) {\n  deleteEverything(now);\n}", "if (x) {}");
    expect(r).toMatchObject({ ok: false, reason: "not_found" });
  });

  it("refuses two candidates and says where both are, at whichever step found them", () => {
    const file = "x = 1\ny = 2\n\nx = 1\ny = 2\n";
    expect(applyEdit(file, "x = 1\ny = 2", "z")).toEqual({
      ok: false,
      reason: "ambiguous",
      step: "exact",
      places: [
        { from: 1, to: 2 },
        { from: 4, to: 5 },
      ],
    });
    const indented = "  x = 1\n\n    x = 1\n";
    expect(applyEdit(indented, "x  = 1", "z")).toMatchObject({ ok: false, reason: "not_found" });
    expect(applyEdit(indented, "\tx = 1 ", "z")).toMatchObject({
      ok: false,
      reason: "ambiguous",
      step: "indentation",
      places: [
        { from: 1, to: 1 },
        { from: 3, to: 3 },
      ],
    });
  });

  it("keeps CRLF line endings and the missing final newline", () => {
    const file = "one\r\n  two\r\nthree";
    const r = applyEdit(file, "two \nthree", "2\n3");
    expect(r).toMatchObject({ ok: true, step: "indentation" });
    expect(r.ok && r.text).toBe("one\r\n  2\r\n3");
    const exact = applyEdit("a\r\nb\r\n", "a\r\nb", "c\nd");
    expect(exact.ok && exact.text).toBe("c\r\nd\r\n");
  });

  it("suggests the closest text when nothing matches", () => {
    const r = applyEdit(PY, "for item in items:\n    s += item.price", "x");
    expect(r).toMatchObject({ ok: false, reason: "not_found", closest: { from: 4, to: 5 } });
  });

  it("says when old and new text are the same", () => {
    expect(applyEdit("a", "a", "a")).toEqual({ ok: false, reason: "unchanged" });
  });

  it("maps indentation linearly when it can, else line by line", () => {
    // 2 spaces in the model's text are a tab in the file
    expect(reindent(["a", "  b", "    c"], ["a", "  b"], ["\ta", "\t\tb"])).toEqual([
      "\ta",
      "\t\tb",
      "\t\t\tc",
    ]);
    // flattened: each line takes the indentation of the file line at its position
    expect(reindent(["x", "y", "z"], ["a", "b"], ["    a", "  b"])).toEqual([
      "    x",
      "  y",
      "  z",
    ]);
  });
});
