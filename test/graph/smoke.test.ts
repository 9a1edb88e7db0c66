import { readFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { call, calls, keelScript, runCoder, startFakeOllama, tempWorkspace } from "../support/harness.js";

describe("smoke", () => {
  let close: (() => Promise<void>) | undefined;
  afterEach(async () => close?.());

  it("builds a file", async () => {
    const fake = await startFakeOllama({
      script: keelScript((req) =>
        req.turn === 0 ? calls(call("write_file", { path: "hello.txt", content: "hi\n" })) : { content: "Wrote hello.txt." },
      ),
    });
    close = fake.close;
    const ws = tempWorkspace();
    const { state } = await runCoder(fake, "Create hello.txt saying hi", { workspace: ws });
    expect(state.status).toBe("done");
    expect(readFileSync(path.join(ws, "hello.txt"), "utf8")).toBe("hi\n");
    const turns = fake.chatBodies({ turnsOnly: true });
    console.log(JSON.stringify(turns[1]?.messages, null, 1));
    expect(fake.violations).toEqual([]);
  });
});
