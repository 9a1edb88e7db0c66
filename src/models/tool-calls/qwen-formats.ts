/**
 * Qwen3-Coder's XML calls (Qwen3.5, Seed-OSS), read as the chat template writes them or not at all.
 */
import { charge, scanAll } from "./meter.js";
import { find, findRe, inline, XML_NAME } from "./scan.js";
import type { Extraction, Extractor } from "./types.js";

/** Drops the single newline templates put around XML values. */
const xmlValue = (v: string) => v.replace(/^\r?\n/, "").replace(/\r?\n$/, "");

/** Where a value would run into the next parameter: a line that opens one. */
const NEXT_PARAMETER = /\n[ \t]*<parameter=[^<>\s]/;

/**
 * The parameters of a Qwen3-Coder function from `at`, read strictly: nothing but whitespace and
 * `<parameter=name>value</parameter>` elements, each name once, then `</function>`. Returns where
 * `</function>` ends, or what is wrong (an unclosed parameter or function, a value running into the
 * next parameter's tag, stray text, a parameter twice): a broken call is text, never half a call or
 * a call with one value swallowing another.
 */
function xmlFunctionBody(
  text: string,
  at: number,
): { args: Record<string, unknown>; end: number } | { wrong: string } {
  const args: Record<string, unknown> = {};
  let i = at;
  for (;;) {
    const from = i;
    while (i < text.length && /\s/.test(text[i]!)) i++;
    charge(i - from + 1);
    if (text.startsWith("</function>", i)) return { args, end: i + "</function>".length };
    if (i >= text.length) return { wrong: "the text ends before </function>" };
    const open = /^<parameter=([^<>\n]*)>/.exec(text.slice(i, i + 200));
    if (!open) {
      const what = text.slice(i, i + 30).split("\n")[0]!;
      return { wrong: `${JSON.stringify(what)} stands where a <parameter=…> or </function> must` };
    }
    const key = open[1]!.trim();
    if (!XML_NAME.test(key)) return { wrong: `<parameter=${key}> has no valid name` };
    if (key in args) return { wrong: `the parameter ${key} is given twice` };
    const value = i + open[0].length;
    const close = find(text, "</parameter>", value);
    if (close < 0) return { wrong: `<parameter=${key}> is not closed` };
    const runOn = findRe(text, NEXT_PARAMETER, value).at;
    if (runOn >= 0 && runOn < close)
      return { wrong: `the value of ${key} runs into the next <parameter=…> before </parameter>` };
    charge(close - value);
    args[key] = xmlValue(text.slice(value, close));
    i = close + "</parameter>".length;
  }
}

const QWEN_OPEN = /(<(seed:)?tool_call>\s*)?<function=([^<>\n]*)>(?!\s*\{)/gu;

/**
 * Qwen3-Coder and Qwen3.5: `<tool_call><function=name><parameter=k>v</parameter></function></tool_call>`
 * (Seed-OSS wraps the same in `<seed:tool_call>`; a server that strips the special tokens leaves
 * the function bare). Read as the template writes it, or not at all: the function named with one
 * word, holding only parameter elements, each once, and closed; a block opened with `<tool_call>`
 * closed by its own `</tool_call>` right after, a bare function by none. Anything else is
 * described in `problem` and stays text — a malformed block never becomes a call.
 */
export const qwen3CoderFormat: Extractor = (text) => {
  const out: Extraction[] = [];
  let after = 0;
  for (const m of scanAll(QWEN_OPEN, text)) {
    if (m.index < after) continue; // inside a value of the call before
    const name = m[3]!.trim();
    const body = m.index + m[0].length;
    const read = xmlFunctionBody(text, body);
    // An unclosed tag inside a sentence ("Qwen3-Coder writes `<function=name>` …"): a mention.
    if (
      "wrong" in read &&
      inline(text, m.index) &&
      !/^\s*<parameter=/.test(text.slice(body, body + 40))
    )
      continue;
    let wrong = "wrong" in read ? read.wrong : undefined;
    let end = "wrong" in read ? body : read.end;
    if (!wrong && !XML_NAME.test(name)) wrong = `<function=${name}> has no valid tool name`;
    if (!wrong) {
      const tail = /^\s*<\/((?:seed:)?tool_call)>/.exec(text.slice(end, end + 200));
      const opener = m[1] ? `${m[2] ?? ""}tool_call` : undefined;
      const twice = /^\s*<\/(?:seed:)?tool_call>/.exec(
        text.slice(end + (tail?.[0].length ?? 0), end + 400),
      );
      const inner = /<(?:seed:)?tool_call>\s*$/.test(
        text.slice(Math.max(0, m.index - 200), m.index),
      );
      if (opener && tail?.[1] !== opener)
        wrong = `<${opener}> is not closed by </${opener}> right after </function>`;
      else if ((!opener && tail) || twice)
        wrong = `</${(twice ?? tail)![0].trim().slice(2, -1)}> closes a block that was not opened`;
      else if (inner) wrong = "a <tool_call> block is opened inside another";
      else if (tail) end += tail[0].length;
    }
    if (!wrong) after = end;
    else {
      // Markup inside a broken block is the block's: nothing up to its </function> is read again.
      const close = find(text, "</function>", body);
      after = close < 0 ? text.length : close + "</function>".length;
    }
    out.push(
      wrong === undefined && "args" in read
        ? { start: m.index, end, calls: [{ name, arguments: read.args, textValues: true }] }
        : {
            start: m.index,
            end,
            calls: [],
            problem: `<function=${name}> must contain only <parameter=name>value</parameter> elements and end with </function> (${wrong})`,
          },
    );
  }
  return out;
};
