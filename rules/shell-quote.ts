/** Quotes one argument for `/bin/sh` (commands are started as a command line). */
export function quote(argument: string): string {
  return `'${argument.replaceAll("'", `'\\''`)}'`;
}
