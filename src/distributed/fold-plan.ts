/**
 * Which folders can be summarised as units complete: a folder is ready once every file in it and
 * every subfolder below it is done, so summaries fold bottom-up while workers still run. Pure.
 */
const dirOf = (p: string) => {
  const i = p.lastIndexOf("/");
  return i < 0 ? "." : p.slice(0, i);
};

export class FoldPlan {
  /** Per folder: files and subfolders not done yet. */
  private readonly open = new Map<string, number>();
  private readonly parent = new Map<string, string | undefined>();

  /** `folders`: every folder holding a unit, and their ancestors up to "." (as the manifest lists them). */
  constructor(files: string[], folders: string[]) {
    const known = new Set(folders);
    for (const d of folders) this.open.set(d, 0);
    for (const f of files) {
      const d = dirOf(f);
      this.open.set(d, (this.open.get(d) ?? 0) + 1);
    }
    for (const d of folders) {
      if (d === ".") continue;
      let p = dirOf(d);
      while (p !== "." && !known.has(p)) p = dirOf(p);
      this.parent.set(d, known.has(p) ? p : undefined);
      if (known.has(p)) this.open.set(p, this.open.get(p)! + 1);
    }
  }

  /** Folders with nothing left open at the start (none, unless a folder holds no units). */
  initiallyReady(): string[] {
    return [...this.open].filter(([, n]) => n === 0).map(([d]) => d);
  }

  /** A unit is done: the folders that became ready (at most its own folder). */
  unitDone(path: string): string[] {
    return this.close(dirOf(path));
  }

  /** A folder was summarised: its parent, when that became ready. */
  folderDone(folder: string): string[] {
    const p = this.parent.get(folder);
    return p === undefined ? [] : this.close(p);
  }

  private close(folder: string): string[] {
    const n = this.open.get(folder);
    if (n === undefined) return [];
    this.open.set(folder, n - 1);
    return n - 1 === 0 ? [folder] : [];
  }
}
