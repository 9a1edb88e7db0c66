/** The value after a command-line option of a bench script (`--turns 80`, `-k 2`), if given. */
export function option(name: string, argv: readonly string[] = process.argv): string | undefined {
  const i = argv.indexOf(name);
  return i > 0 ? argv[i + 1] : undefined;
}
