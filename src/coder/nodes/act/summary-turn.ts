/**
 * The tool-less summary turn `recover` asks for when a run ends without its work done: the model
 * says, in prose, what it did and what is left; no tool is offered and nothing runs.
 */
import { AIMessage, HumanMessage } from "@langchain/core/messages";
import { ownSummary, SUMMARY_REQUEST } from "../../../guard/ladder.js";
import type { NodeEnv } from "../../runtime.js";
import type { CoderStateUpdate, CoderStateValue } from "../../state.js";
import { askTurn } from "../../turn/ask.js";
import { fitUpdate } from "../../turn/usage.js";
import type { TurnSetup } from "../../turn/setup.js";
import { readReply } from "./channel.js";
import { turnMetadata, visibleText } from "./reply.js";

export async function summaryTurn(
  state: CoderStateValue & { summaryFor: NonNullable<CoderStateValue["summaryFor"]> },
  env: NodeEnv,
  { format, base: turn }: TurnSetup,
): Promise<CoderStateUpdate> {
  const ask = new HumanMessage({
    content: SUMMARY_REQUEST(state.summaryFor.detail),
    name: "keel",
  });
  const answer = await askTurn({
    ...turn,
    kind: "summary",
    tools: [],
    mode: "prompt",
    history: [...state.messages, ask],
  });
  const reply = answer.reply;
  const text = typeof reply.content === "string" ? reply.content : reply.text;
  return {
    messages: [
      ask,
      new AIMessage({
        content: text,
        ...turnMetadata(answer, turn.modelName),
      }),
    ],
    turns: state.turns + 1,
    // a reply keel stopped in a loop is no summary: the report would print the loop again
    summary: answer.cut?.looped
      ? ""
      : ownSummary(
          visibleText(readReply(reply, { mode: "prompt", format, tools: [], schemas: {} }).content),
          ask.text,
        ),
    summaryFor: null,
    failure: { ...state.summaryFor, summarized: true },
    ...fitUpdate(state.fit, answer.fit),
  };
}
