/** The environment a command gets: PATH, HOME, locale and toolchain variables, nothing secret. */
import { describe, expect, it } from "vitest";
import { commandEnv } from "../../src/env.js";

describe("commandEnv", () => {
  it("passes PATH, HOME, locale and toolchain variables, and nothing secret", () => {
    const env = commandEnv({
      PATH: "/usr/bin",
      HOME: "/home/ann",
      LC_ALL: "C.UTF-8",
      PYENV_ROOT: "/home/ann/.pyenv",
      OPENAI_API_KEY: "sk-1",
      GITHUB_TOKEN: "ghp",
      AWS_SECRET_ACCESS_KEY: "x",
      KEEL_MODEL: "m",
      OLLAMA_HOST: "h",
    });
    expect(env).toEqual({
      PATH: "/usr/bin",
      HOME: "/home/ann",
      LC_ALL: "C.UTF-8",
      PYENV_ROOT: "/home/ann/.pyenv",
    });
  });
});
