/**
 * A file name as file systems that fold names take it — case, Unicode forms, ignorable code points,
 * Windows' trailing dots, streams and short (8.3) names — so that a protected name is found however
 * it is spelled. Pure.
 */

/** Code points file systems and tools ignore or drop in names (HFS+ ignored them, like git's check). */
const IGNORABLE = /\u034f|[\u00ad\u180e\u200b-\u200f\u202a-\u202e\u2060-\u206f\ufeff]/g;

/**
 * A path segment as a file system that folds names may take it: case-insensitive (macOS, Windows),
 * Unicode-normalising (NFC/NFD; NFKC also maps `ſ` and the Kelvin sign to `s` and `k`), without
 * ignorable code points, Windows' trailing dots and spaces, or an NTFS stream (`name::$DATA`).
 */
export function foldName(segment: string): string {
  return segment
    .normalize("NFKC")
    .replace(IGNORABLE, "")
    .toLowerCase()
    .split(":")[0]!
    .replace(/[. ]+$/, "");
}

/** The list's names folded once (`.Rprofile` is written as R spells it). */
const foldedNames = new Map<string, string>();
const foldedEntryName = (name: string) => {
  let folded = foldedNames.get(name);
  if (folded === undefined) foldedNames.set(name, (folded = foldName(name)));
  return folded;
};

/** A Windows short (8.3) name: up to six characters, `~` and a number, a short extension. */
export const SHORT_NAME = /^([a-z0-9_$!#%&'()@^`{}-]{1,6})~[1-9][0-9]*(\.[^.]{0,3})?$/;

/**
 * Whether a path segment names the list's `name` on some file system: the same folded name, or
 * a Windows short name of it (`VSCODE~1` for `.vscode`, `GIT~1` for `.git`; `VS1A2B~1`, the form
 * Windows gives after a few collisions, too).
 */
export function sameName(segment: string, name: string): boolean {
  const folded = foldName(segment);
  const want = foldedEntryName(name);
  if (folded === want) return true;
  const short = SHORT_NAME.exec(folded)?.[1];
  if (short === undefined) return false;
  const stem = want
    .replace(/^\.+/, "")
    .split(".")[0]!
    .replace(/[^a-z0-9_-]/g, "");
  return (
    short === stem.slice(0, 6) ||
    (short.length === 6 &&
      short.slice(0, 2) === stem.slice(0, 2) &&
      /^[0-9a-f]{4}$/.test(short.slice(2)))
  );
}
