/** A model server's errors classified: their kind, whether to retry, and what people read. */
import { describe, expect, it } from "vitest";
import { classifyModelError, ProtocolError } from "../../../src/models/errors.js";

const PAGE =
  '<!DOCTYPE HTML>\n<html lang="en">\n<head><meta charset="utf-8"><title>Error response</title>\n<style>p { color: red }</style></head>\n<body><h1>Error response</h1>\n<p>Error code: 501</p></body>\n</html>\n';

describe("classifyModelError", () => {
  it.each([
    [
      { name: "ResponseError", status_code: 404, message: "model 'x' not found" },
      "model_missing",
      false,
    ],
    [{ name: "ResponseError", status_code: 503, message: "server busy" }, "overloaded", true],
    [
      { name: "ResponseError", status_code: 400, message: "does not support tools" },
      "no_tools",
      false,
    ],
    [
      {
        name: "ResponseError",
        status_code: 500,
        message:
          'error parsing tool call: raw=\'{"name": "write_file", "arguments": {"path": "a.py"\', err=unexpected end of JSON input',
      },
      "tool_parse",
      false,
    ],
    [
      new Error("XML syntax error on line 14: element <parameter> closed by </function>"),
      "tool_parse",
      false,
    ],
    [
      { name: "ResponseError", status_code: 400, message: "invalid tool definition" },
      "bad_request",
      false,
    ],
    [
      Object.assign(new TypeError("fetch failed"), { cause: { code: "ECONNREFUSED" } }),
      "unreachable",
      true,
    ],
    [new Error("Did not receive done or success response in stream."), "dropped", true],
    [
      Object.assign(new TypeError("terminated"), { cause: { code: "UND_ERR_SOCKET" } }),
      "dropped",
      true,
    ],
    [
      Object.assign(new Error("no response within 10 ms"), { name: "ModelTimeoutError" }),
      "timeout",
      true,
    ],
    // Another web server's page is no passing failure; a proxy's page for a restarting server is.
    [{ name: "ResponseError", status_code: 501, message: PAGE }, "protocol", false],
    [{ name: "ResponseError", status_code: 404, message: PAGE }, "protocol", false],
    [{ name: "ResponseError", status_code: 502, message: PAGE }, "overloaded", true],
    [new ProtocolError("GET /api/tags answered 404: no Ollama API at this URL"), "protocol", false],
  ])("%o → %s", (err, kind, retryable) => {
    expect(classifyModelError(err)).toMatchObject({ kind, retryable });
  });

  it("tells of a web page by its text, without the markup", () => {
    expect(
      classifyModelError({ name: "ResponseError", status_code: 501, message: PAGE }).message,
    ).toBe(
      'HTTP 501, a web page ("Error response Error response Error code: 501"), not a model server\'s reply',
    );
  });
});
