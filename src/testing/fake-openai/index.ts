export * from "./server.js";
export { asChatBody } from "./replies.js";
