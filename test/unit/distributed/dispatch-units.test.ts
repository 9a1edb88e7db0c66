/** A unit's standing when a coordinator starts again: done, waited for, failed or to send. */
import { describe, expect, it } from "vitest";
import { standingOf } from "../../../src/distributed/dispatch-units.js";
import type { AnalysisJob } from "../../../src/distributed/queue.js";

describe("a unit's standing when a coordinator starts (again)", () => {
  const job = (state: AnalysisJob["state"]): AnalysisJob => ({ key: "k", state, output: null });
  const finding = { model: "m", depth: "deep", finding: {} };
  const failed = { model: "m", depth: "deep", failed: "schema" };

  it("done, waited for, failed or to send", () => {
    expect(standingOf(finding, [], "m", "deep")).toBe("reused");
    expect(standingOf(finding, [job("completed")], "m", "deep")).toBe("analyzed");
    expect(standingOf(failed, [job("completed")], "m", "deep")).toBe("failed");
    expect(standingOf(failed, [], "m", "deep")).toBe("send"); // an earlier run's: asked again
    expect(standingOf(undefined, [job("active")], "m", "deep")).toBe("waiting");
    expect(standingOf(undefined, [job("retry")], "m", "deep")).toBe("waiting");
    expect(standingOf(undefined, [job("failed")], "m", "deep")).toBe("failed-job");
    expect(standingOf(undefined, [], "m", "deep")).toBe("send");
    expect(standingOf({ ...finding, depth: "quick" }, [], "m", "deep")).toBe("send");
  });
});
