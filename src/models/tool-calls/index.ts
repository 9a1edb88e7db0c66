export { argumentsFromText, parseToolCalls } from "./parse.js";
export { FORMATS, type FormatRecord } from "./formats.js";
export { capped, MAX_CALLS_PER_REPLY } from "./cap.js";
export { Meter } from "./meter.js";
export {
  FORMAT_NAMES,
  type FormatName,
  type ParseOptions,
  type ParseResult,
  type ParsedCall,
  type RejectedCall,
} from "./types.js";
export {
  ANSWER_FRAMES,
  REASONING_MARKERS,
  maskReasoning,
  stripReasoning,
  type ReasoningMarker,
} from "./reasoning.js";
