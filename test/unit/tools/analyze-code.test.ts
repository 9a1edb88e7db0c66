/** analyze_code: TypeScript and Python read with tree-sitter, and nothing read through a link. */
import { describe, expect, it } from "vitest";
import { run, context } from "../../support/tools.js";
import { linkedTools, text } from "../../support/links.js";

describe("file tools", () => {
  it("analyze_code parses TypeScript and Python with tree-sitter", async () => {
    const ctx = context();
    await run(
      "write_file",
      {
        path: "src/a.ts",
        content:
          'import { x } from "./x.js";\nexport class Users {}\nexport const total = 3;\nfunction helper() {}\n',
      },
      ctx,
    );
    await run(
      "write_file",
      {
        path: "tool.py",
        content:
          "import os\nfrom pathlib import Path\n\nclass Tool:\n    pass\n\ndef main():\n    pass\n",
      },
      ctx,
    );
    const ts = await run("analyze_code", { path: "src/a.ts" }, ctx);
    expect(ts.ok && ts.output).toContain("typescript, 5 lines");
    expect(ts.ok && ts.output).toContain("imports: ./x.js");
    expect(ts.ok && ts.output).toContain(
      "export class Users (line 2); export variable total (line 3); function helper (line 4)",
    );
    const folder = await run("analyze_code", { path: "." }, ctx);
    expect(folder.ok && folder.output).toMatch(/python: 1 files/);
    expect(folder.ok && folder.output).toMatch(/class Tool \(line 4\); function main \(line 7\)/);
  });
});

const { run: runLinked } = linkedTools();

describe("walks never follow a link out", () => {
  it("analyze_code on a folder reads nothing through a link", async () => {
    const r = await runLinked("analyze_code", { path: "src" });
    expect(text(r)).not.toContain("secret-link");
    expect(text(r)).not.toContain("dir-out");
  });
});
