/**
 * Scripted model profiles whose best configuration differs, for `keel calibrate` and its bench.
 * Each solves keel eval's tasks the way the eval profiles do (eval-model.ts), and fails in one way
 * that one setting cures:
 *   native-broken  its native calls arrive without their arguments (a server's tool parser that
 *                  loses them); in prompt mode it writes well-formed calls as text
 *   short-memory   claims a 32,768-token context but holds 4,000: past that it loses the start of
 *                  the conversation (and the canary's marker); a smaller window cures it
 *   overthinker    a thinking model that spends its whole budget thinking; without thinking it
 *                  does not know what to do; cut at a few hundred tokens of thought, it acts on it
 * Also `canaryReply`: how a model that can read answers keel's canary (models/canary.ts).
 */
import type { ChatView, FakeModel, Reply, Script } from "./fake-ollama/types.js";
import { asText, evalStep, requestOf, resultsOf, userNameIn } from "./eval-model.js";
import { call, keelScript } from "./script.js";

export const CALIBRATION_PROFILES = ["native-broken", "short-memory", "overthinker"] as const;
export type CalibrationProfile = (typeof CALIBRATION_PROFILES)[number];

/** The context short-memory holds, whatever it claims. */
export const SHORT_MEMORY_HOLDS = 4000;

/** The profiles as fake Ollama models. */
export const CALIBRATION_MODELS: Record<CalibrationProfile, FakeModel> = {
  "native-broken": { capabilities: ["completion", "tools"], family: "qwen2", contextLength: 32768 },
  "short-memory": { capabilities: ["completion", "tools"], family: "qwen2", contextLength: 32768 },
  overthinker: {
    capabilities: ["completion", "tools", "thinking"],
    family: "qwen3",
    contextLength: 40960,
  },
};

const MARKER = /KEEL-CANARY-[A-Z0-9]+/;

/** The canary's answer from a model that read the whole prompt: its marker; else undefined. */
export function canaryReply(req: ChatView, holds = Infinity): Reply | undefined {
  const marker = MARKER.exec(req.userText)?.[0];
  if (!marker || !/asked for at the end/.test(req.userText)) return undefined;
  return { content: req.promptTokens <= holds ? marker : "I do not see any code." };
}

/** Text that never repeats (a loop watch must not stop it): about `tokens` tokens of musing. */
export function musing(tokens: number, seed = 1): string {
  let x = seed;
  const words: string[] = [];
  for (let i = 0; i < tokens; i++) {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    words.push(`${["maybe", "perhaps", "consider", "then", "so", "if"][x % 6]}${x % 997}`);
  }
  return words.join(" ");
}

/** The note keel sends with a thought it cut (coder/turn/ask.ts). */
const THOUGHT_CUT = /Your thinking was stopped after/;

/** One profile's reply to a model turn of an eval task (structured calls are keelScript's). */
function turn(profile: CalibrationProfile, req: ChatView, attempt: number): Reply {
  const native = (req.body.tools?.length ?? 0) > 0;
  if (profile === "short-memory" && req.promptTokens > SHORT_MEMORY_HOLDS)
    return { content: "I cannot find what you asked for in this conversation." };
  if (profile === "overthinker") {
    const thinking = req.body.think !== false;
    if (thinking)
      return {
        content: "",
        thinking: musing(20_000, req.turn + 1),
        thinkingPieces: 400,
        paceMs: 1,
      };
    if (!req.last || !THOUGHT_CUT.test(req.last.content))
      return { content: "I would have to think about how to do this first." };
  }
  let step = evalStep(req, attempt, profile);
  if (step === undefined) return { content: "I do not know this task." };
  // short-memory reads the long file whole first, and answers from it when the read shows the user
  if (profile === "short-memory" && requestOf(req).startsWith("data/users.js")) {
    const results = resultsOf(req);
    const id = /user with id (\d+)/.exec(requestOf(req))?.[1] ?? "?";
    const seen = userNameIn(results.join("\n"), id);
    if (results.length === 0) step = call("read_file", { path: "data/users.js" });
    else if (seen) step = `The user with id ${id} is ${seen}.`;
    else if (results.length === 1) step = call("grep", { pattern: `id: ${id},` });
  }
  if (typeof step === "string") return { content: step };
  if (!native) return { content: asText(step) };
  // native-broken: the server's parser loses the arguments
  if (profile === "native-broken") return { content: "", toolCalls: [{ ...step, arguments: {} }] };
  return { content: "", toolCalls: [step] };
}

/** The fake's script for the calibration profiles (the model name is the profile). */
export function calibrationScript(): Script {
  const attempts = new Map<string, number>();
  return keelScript((req: ChatView): Reply => {
    const profile = req.body.model.replace(/:latest$/, "") as CalibrationProfile;
    const holds = profile === "short-memory" ? SHORT_MEMORY_HOLDS : Infinity;
    const canary = canaryReply(req, holds);
    if (canary) return canary;
    const id = `${profile}\0${requestOf(req)}\0${(req.body.tools?.length ?? 0) > 0}`;
    if (req.turn === 0 && !THOUGHT_CUT.test(req.last?.content ?? ""))
      attempts.set(id, (attempts.get(id) ?? 0) + 1);
    return turn(profile, req, attempts.get(id) ?? 1);
  });
}
