// An error about one file on disk, for the user to act on: the message names the file first.

export class FileError extends Error {
  override name = 'FileError'
  constructor(
    readonly file: string,
    problem: string,
  ) {
    super(`${file}: ${problem}`)
  }
}
