/**
 * keel's own words in the prompt name no file of their own: small models copy an example path
 * (a plan prompt's "src/api/users.js") into their plan and then write it.
 */
import { describe, expect, it } from "vitest";
import {
  call,
  calls,
  fakeOllamaPerTest,
  keelScript,
  runCoder,
  tempWorkspace,
} from "../support/harness.js";

const startFake = fakeOllamaPerTest();

/** Anything shaped like a file path with a common extension. */
const PATHS = /[\w./-]+\.(?:js|ts|tsx|jsx|py|md|json|txt|go|rs|java|rb|toml|ya?ml|html|css)\b/g;

describe("keel's prompt text", () => {
  it("names only the files the request and the model named, in the system prompt and keel's notes", async () => {
    const fake = await startFake({
      script: keelScript((req) =>
        req.turn === 0
          ? calls(call("write_file", { path: "a.py", content: "x = 1\n" }))
          : { content: "Done." },
      ),
    });
    await runCoder(fake, "Create a.py that sets x to 1", { workspace: tempWorkspace() });
    const bodies = fake.chatBodies();
    expect(bodies.length).toBeGreaterThanOrEqual(2); // the plan and the turns
    const words = bodies.flatMap((b) =>
      (b.messages ?? [])
        .filter((m) => m.role === "system" || (m.role === "user" && m.content.startsWith("[keel]")))
        .map((m) => m.content),
    );
    expect(words.join("\n").includes("Answer with JSON only")).toBe(true); // the plan ask is read
    expect([...new Set(words.join("\n").match(PATHS) ?? [])].filter((p) => p !== "a.py")).toEqual(
      [],
    );
  });
});
