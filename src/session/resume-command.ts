/** The commands keel suggests to a person for going on with a thread, as a shell reads them back. */

/** A word as a shell reads it back: quoted when it holds anything but plain characters. */
export const shellWord = (s: string): string =>
  /^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;

/** The command that resumes a thread, or follows it up with a request, with the flags that find it. */
export function resumeCommand(threadId: string, where: readonly string[] = [], request = false) {
  const words = ["keel run --thread", shellWord(threadId), ...where.map(shellWord)];
  return [...words, ...(request ? ['"<request>"'] : [])].join(" ");
}
