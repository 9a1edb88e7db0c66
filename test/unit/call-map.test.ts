// At the top of test/unit/: the call map spans all of src/ (scripts/call-map.ts, docs/ARCHITECTURE.md).
/**
 * docs/ARCHITECTURE.md's list of the files one tool call crosses is what `scripts/call-map.ts`
 * measures today (V8 coverage of one native write_file call): a change that adds or drops a file on
 * that path fails here until the doc is regenerated with `npm run docs:call-map`.
 */
import { execFile } from "node:child_process";
import path from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const root = path.resolve(import.meta.dirname, "../..");

describe("the measured call map", () => {
  it("docs/ARCHITECTURE.md lists the files one write_file call runs", async () => {
    const { stdout } = await promisify(execFile)(
      path.join(root, "node_modules/.bin/tsx"),
      ["scripts/call-map.ts", "--check"],
      { cwd: root },
    );
    expect(stdout).toMatch(/call map is current \(\d+ files\)/);
  }, 180_000);
});
