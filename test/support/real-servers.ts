/**
 * vitest global setup: says, in one line, whether the contract suite's real half runs — the real
 * llama-server and Ollama that `npm run real-servers` installs (test/contract/targets.ts registers
 * them only when they are there; nothing is skipped inside a test).
 */
import { readEnv } from "../../src/env.js";
import { locateRealServers } from "../../src/testing/real-servers.js";

export default function setup(): void {
  const found = locateRealServers(readEnv().realServers);
  const missing = [
    ...(found.llamaServer && found.ggufs["tiny-qwen2"] ? [] : ["llama-server"]),
    ...(found.ollama && found.ollamaModels ? [] : ["Ollama"]),
  ];
  if (missing.length)
    console.log(
      `contract suite: real half not run for ${missing.join(" and ")} (not installed in ${found.cacheDir}); \`npm run real-servers\` installs them`,
    );
  else
    console.log(`contract suite: fakes and real servers (${found.llamaServer}, ${found.ollama})`);
}
