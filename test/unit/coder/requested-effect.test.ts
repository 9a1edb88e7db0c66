/** What a request asks to write, not how it is phrased; and which of the files a run did not write. */
import { describe, expect, it } from "vitest";
import { requestedEffect, unwritten } from "../../../src/coder/requested-effect.js";
import { ASKS_TO_WRITE, ASKS_NOTHING } from "../../support/requests.js";

describe("requestedEffect: what a request asks to write, not how it is phrased", () => {
  for (const [request, file] of ASKS_TO_WRITE) {
    it(`asks to write ${file ?? "a file"}: ${request}`, () => {
      const e = requestedEffect(request);
      expect(e.writes).toBe(true);
      expect(e.paths).toEqual(file ? [file] : []);
    });
  }
  for (const request of ASKS_NOTHING) {
    it(`asks for nothing: ${request}`, () => {
      expect(requestedEffect(request)).toEqual({ paths: [], writes: false });
    });
  }
});

describe("unwritten: the requested files a run did not write", () => {
  it("a bare name is met in any folder, a path only by itself", () => {
    expect(unwritten(["notes.md"], ["docs/notes.md"])).toEqual([]);
    expect(unwritten(["notes.md"], ["notes.md"])).toEqual([]);
    expect(unwritten(["./Notes.md"], ["notes.md"])).toEqual([]);
    expect(unwritten(["docs/notes.md"], ["notes.md"])).toEqual(["docs/notes.md"]);
    expect(unwritten(["notes.md", "todo.md"], ["todo.md"])).toEqual(["notes.md"]);
    expect(unwritten(["notes.md"], [])).toEqual(["notes.md"]);
  });
});

describe("notes that are not instructions", () => {
  it("'Note: …' and 'note that …' ask for nothing", () => {
    expect(requestedEffect("Note: the config lives in settings.json").writes).toBe(false);
    expect(requestedEffect("Explain the parser. Note that the grammar is in parser.y").writes).toBe(
      false,
    );
  });
});
