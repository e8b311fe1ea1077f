/** The last part of a path the main process gave (a dialog's answer): '/' or '\\' separated, as on Linux or Windows. */
export function basename(p: string): string {
  return p.split(/[\\/]/).pop() || p
}
