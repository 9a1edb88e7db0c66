/**
 * Crash torture: a real `keel run` is SIGKILLed at 20 random moments of a scripted multi-file
 * build and resumed each time. The end state equals an uninterrupted run's, and no command with a
 * side effect ran twice (the side-effect journal; effects.log counts every run).
 */
import { readFileSync, readdirSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import type { ChatView, FakeOllama } from "../../src/testing/fake-ollama/index.js";
import { runKeel } from "../support/cli.js";
import { call, calls, keelScript, fakeOllamaPerTest, tempWorkspace } from "../support/harness.js";

const STEPS = 12;
// Each command takes a while after its effect, so kills land inside commands as well as between.
const command = (k: number) =>
  `node -e "require('fs').appendFileSync('effects.log', 'step${k}\\n'); setTimeout(() => {}, 400)"`;

/**
 * The scripted model, decided from the conversation alone: command k, then file k; after a
 * command cut off by a crash it checks effects.log and re-runs the command only if it did not land.
 */
const script = keelScript((req: ChatView) => {
  const done = req.messages.flatMap((m) => m.tool_calls ?? []).map((c) => c.function);
  const results = req.messages.filter((m) => m.role === "tool");
  const last = done.at(-1);
  const lastResult = results.at(-1)?.content ?? "";
  const stepOf = (f: { arguments: unknown } | undefined) =>
    Number(
      /step(\d+)|part(\d+)/
        .exec(JSON.stringify(f?.arguments ?? ""))
        ?.slice(1)
        .find(Boolean) ?? -1,
    );
  const lastCommand = [...done].reverse().find((f) => f.name === "run_command");
  if (!last) return calls(call("run_command", { command: command(0) }));
  if (
    last.name === "run_command" &&
    lastResult.includes("started before keel stopped without recording its result")
  )
    return calls(call("read_file", { path: "effects.log" }));
  if (last.name === "read_file") {
    const k = stepOf(lastCommand);
    return lastResult.includes(`step${k}`)
      ? calls(call("write_file", { path: `part${k}.txt`, content: `part ${k}\n` }))
      : calls(call("run_command", { command: command(k) }));
  }
  if (last.name === "run_command") {
    const k = stepOf(last);
    return calls(call("write_file", { path: `part${k}.txt`, content: `part ${k}\n` }));
  }
  const k = stepOf(last) + 1;
  return k < STEPS
    ? calls(call("run_command", { command: command(k) }))
    : { content: `Built ${STEPS} parts.` };
});

let fake: FakeOllama | undefined;
const startFake = fakeOllamaPerTest();

const snapshot = (dir: string) =>
  Object.fromEntries(
    readdirSync(dir)
      .filter((f) => f.endsWith(".txt") || f === "effects.log")
      .sort()
      .map((f) => [f, readFileSync(path.join(dir, f), "utf8")]),
  );

describe("crash torture", () => {
  it("up to 20 random SIGKILLs and resumes end where an uninterrupted run ends, every command run once", async () => {
    fake = await startFake({ script });
    const clean = tempWorkspace();
    const whole = await runKeel([
      "run",
      "Build the parts",
      "-w",
      clean,
      "--ollama-url",
      fake.url,
      "--thread",
      "t",
      "--json",
    ]);
    expect(whole.json).toMatchObject({ status: "done" });
    const expected = snapshot(clean);
    expect(expected["effects.log"]).toBe(
      Array.from({ length: STEPS }, (_, k) => `step${k}\n`).join(""),
    );

    const ws = tempWorkspace();
    const start = [
      "run",
      "Build the parts",
      "-w",
      ws,
      "--ollama-url",
      fake.url,
      "--thread",
      "t",
      "--json",
    ];
    // Later attempts only resume: a kill can land after the run finished, before the process exited.
    const resume = ["run", "-w", ws, "--ollama-url", fake.url, "--thread", "t", "--json"];
    const delays: number[] = [];
    let kills = 0;
    let finished = false;
    let started = false;
    for (let attempt = 0; attempt < 60 && !finished; attempt++) {
      const delay = kills < 20 ? 250 + Math.floor(Math.random() * 550) : 0;
      const r = await runKeel(started ? resume : start, {
        onSpawn: (child) => delay && setTimeout(() => child.kill("SIGKILL"), delay),
      });
      started = true;
      if (r.signal === "SIGKILL") {
        kills++;
        delays.push(delay);
      } else if (r.code === 2 && r.stderr.includes("does not exist yet")) {
        started = false; // killed before its first checkpoint: start it again
      } else if (
        (r.code === 0 && r.json?.status === "done") ||
        (r.code === 2 && r.stderr.includes("is finished (done)"))
      ) {
        finished = true;
      } else throw new Error(`run ${attempt} ended with ${r.code}: ${r.stderr.slice(-500)}`);
    }
    expect(finished, `kills at ${delays.join(", ")} ms`).toBe(true);
    // Twenty kills are aimed; on a loaded machine the build can finish before the last ones land.
    expect(kills, `kills at ${delays.join(", ")} ms`).toBeGreaterThanOrEqual(15);
    expect(snapshot(ws), `kills at ${delays.join(", ")} ms`).toEqual(expected);
  });
});

describe("side-effect journal", () => {
  it("a command cut off by a crash after its effect is not run again, and the model is told", async () => {
    fake = await startFake({
      script: keelScript((req) => {
        if (req.turn === 0)
          return calls(
            call("run_command", {
              command: `node -e "require('fs').appendFileSync('once.log', 'ran\\n'); setTimeout(() => {}, 3000)"`,
            }),
          );
        return { content: "Checked." };
      }),
    });
    const ws = tempWorkspace();
    const args = [
      "run",
      "Run the job once",
      "-w",
      ws,
      "--ollama-url",
      fake.url,
      "--thread",
      "j",
      "--json",
    ];
    const first = await runKeel(args, {
      onSpawn: (child) => {
        const poll = setInterval(() => {
          if (readdirSync(ws).includes("once.log")) {
            clearInterval(poll);
            child.kill("SIGKILL");
          }
        }, 10);
      },
    });
    expect(first.signal).toBe("SIGKILL");
    const second = await runKeel([
      "run",
      "-w",
      ws,
      "--ollama-url",
      fake.url,
      "--thread",
      "j",
      "--json",
    ]);
    expect(second.json).toMatchObject({ status: "done" });
    expect(readFileSync(path.join(ws, "once.log"), "utf8")).toBe("ran\n");
    const told = fake
      .chatBodies({ turnsOnly: true })
      .at(-1)!
      .messages!.find((m) => m.role === "tool")!;
    expect(told.content).toMatch(
      /started before keel stopped without recording its result.*did not run it again/,
    );
  });
});

describe("orphaned commands", () => {
  it("a command still running after its keel died is waited for before the model is told", async () => {
    // 5 s: the second keel must start while the orphan still runs, on a loaded 2-core CI machine
    // too (at 600 ms it had ended first there, and the model was told the other, true, thing)
    const slow = `node -e "const fs = require('fs'); fs.writeFileSync('started.txt', ''); setTimeout(() => fs.appendFileSync('once.log', 'ran\\\\n'), 5000)"`;
    fake = await startFake({
      script: keelScript((req) =>
        req.turn === 0 ? calls(call("run_command", { command: slow })) : { content: "Checked." },
      ),
    });
    const ws = tempWorkspace();
    const first = await runKeel(
      [
        "run",
        "Run the slow job once",
        "-w",
        ws,
        "--ollama-url",
        fake.url,
        "--thread",
        "o",
        "--json",
      ],
      {
        onSpawn: (child) => {
          const poll = setInterval(() => {
            if (readdirSync(ws).includes("started.txt")) {
              clearInterval(poll);
              child.kill("SIGKILL");
            }
          }, 10);
        },
      },
    );
    expect(first.signal).toBe("SIGKILL");
    expect(readdirSync(ws)).not.toContain("once.log"); // the orphan has not written yet
    const second = await runKeel([
      "run",
      "-w",
      ws,
      "--ollama-url",
      fake.url,
      "--thread",
      "o",
      "--json",
    ]);
    expect(second.json).toMatchObject({ status: "done" });
    const told = fake
      .chatBodies({ turnsOnly: true })
      .at(-1)!
      .messages!.find((m) => m.role === "tool")!;
    expect(told.content).toContain("keel waited for it to end");
    expect(readFileSync(path.join(ws, "once.log"), "utf8")).toBe("ran\n");
  });
});
