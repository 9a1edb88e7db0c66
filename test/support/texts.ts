/**
 * Deterministic texts of each script and kind, for the token-count tests: Chinese prose, minified
 * JSON, a base64 blob, hex, emoji, and a mix. Written here (no fixture copied from elsewhere).
 */
import { createHash } from "node:crypto";

const HAN =
  "我们的项目使用日志模块来记录所有请求和错误每个都应该导出一个函数并且在测试中验证其行为配置文件定义了服务器端口数据库连接与缓存策略用户界面通过接口调用后台处理结果返回给客户";

/** `n` lines of Chinese prose (about 18 characters and two punctuation marks a line). */
export function chineseLines(n: number): string {
  const lines: string[] = [];
  for (let i = 0; i < n; i++) {
    let line = "";
    for (let k = 0; k < 18; k++) line += HAN[(i * 7 + k * 13) % HAN.length];
    lines.push(`${line.slice(0, 9)}，${line.slice(9)}。`);
  }
  return lines.join("\n");
}

/** Minified JSON of `n` records. */
export function minifiedJson(n: number): string {
  return JSON.stringify(
    Array.from({ length: n }, (_, i) => ({
      id: i,
      name: `user_${i}`,
      email: `user${i}@example.org`,
      active: i % 3 !== 0,
      roles: i % 2 ? ["admin", "dev"] : ["dev"],
      score: Math.round(((i * 37) % 100) * 1.5),
    })),
  );
}

/** `bytes` pseudo-random bytes as base64 (a blob, as an image or a key inlined in a file). */
export function base64Blob(bytes: number): string {
  let out = Buffer.alloc(0);
  for (let i = 0; out.length < bytes; i++)
    out = Buffer.concat([out, createHash("sha256").update(`blob ${i}`).digest()]);
  return out.subarray(0, bytes).toString("base64");
}

/** `bytes` pseudo-random bytes as hex. */
export function hexBlob(bytes: number): string {
  return Buffer.from(base64Blob(bytes), "base64").toString("hex");
}

/** English prose. */
export const PROSE =
  "The server answered every request in order, and the client kept its connection open between them. When a reply was late, the user saw a short note explaining why, and the work went on without losing anything that had been written before. ";

/** TypeScript source. */
export const TYPESCRIPT = `export function mergeRanges(ranges: Array<[number, number]>): Array<[number, number]> {
  const sorted = [...ranges].sort((a, b) => a[0] - b[0]);
  const out: Array<[number, number]> = [];
  for (const [start, end] of sorted) {
    const last = out.at(-1);
    if (last && start <= last[1]) last[1] = Math.max(last[1], end);
    else out.push([start, end]);
  }
  return out;
}
`;

/** Emoji-laden chat text. */
export const EMOJI = "Shipped it 🎉🚀 thanks team 👍🏽 see you 👨‍👩‍👧 ✨ ";

/** A mix: prose, code, a JSON line, Chinese and a blob. */
export function mixedText(): string {
  return [
    PROSE,
    TYPESCRIPT,
    minifiedJson(5),
    chineseLines(10),
    `key: ${base64Blob(300)}`,
    EMOJI.repeat(3),
  ].join("\n");
}
