import path from "node:path";
import { describe, expect, it } from "vitest";
import { SqliteStore } from "../../../src/persistence/sqlite-store.js";
import { tempWorkspace } from "../../support/harness.js";

describe("SqliteStore", () => {
  it("puts, gets, searches by prefix and filter, deletes, and survives reopening", async () => {
    const file = path.join(tempWorkspace(), "s.db");
    const store = new SqliteStore(file);
    await store.put(["keel", "findings", "r1"], "file:a.ts", { hash: "1", size: 10 });
    await store.put(["keel", "findings", "r1"], "file:b.ts", { hash: "2", size: 30 });
    await store.put(["keel", "findings", "r2"], "file:c.ts", { hash: "3", size: 20 });
    await store.put(["keel", "runs"], "t1", { cursor: 1 });
    expect((await store.get(["keel", "findings", "r1"], "file:a.ts"))?.value).toEqual({
      hash: "1",
      size: 10,
    });
    expect(await store.get(["keel", "findings", "r1"], "nope")).toBeNull();
    const all = await store.search(["keel", "findings"], { limit: 100 });
    expect(all.map((i) => i.key).sort()).toEqual(["file:a.ts", "file:b.ts", "file:c.ts"]);
    const big = await store.search(["keel", "findings"], {
      filter: { size: { $gte: 20 } },
      limit: 100,
    });
    expect(big.map((i) => i.key).sort()).toEqual(["file:b.ts", "file:c.ts"]);
    expect(await store.listNamespaces({ prefix: ["keel"], maxDepth: 2 })).toEqual([
      ["keel", "findings"],
      ["keel", "runs"],
    ]);
    await store.put(["keel", "findings", "r1"], "file:a.ts", { hash: "9" });
    await store.delete(["keel", "findings", "r1"], "file:b.ts");
    store.close();
    const again = new SqliteStore(file);
    expect((await again.get(["keel", "findings", "r1"], "file:a.ts"))?.value).toEqual({
      hash: "9",
    });
    expect(await again.get(["keel", "findings", "r1"], "file:b.ts")).toBeNull();
    again.close();
  });
});
