import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    globalSetup: [
      "test/support/temp-root.ts",
      "test/support/build.ts",
      "test/support/postgres.ts",
      "test/support/real-servers.ts",
    ],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
  },
});
