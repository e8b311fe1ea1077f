// vocab.txt IO (HF load_vocab semantics): one token per line, id = 0-based line number.
import { existsSync, readFileSync } from 'node:fs'

export class VocabError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'VocabError'
  }
}

/** HF load_vocab: one token per line, id = 0-based line number; a repeated token keeps its last id. */
export function parseVocabText(content: string): string[] {
  if (content.charCodeAt(0) === 0xfeff) content = content.slice(1)
  const lines = content.split(/\r\n|\n|\r/)
  if (lines.length > 0 && lines[lines.length - 1] === '') lines.pop()
  return lines
}

/** The tokens of a vocab.txt file; a VocabError names the file when it is missing, unreadable or empty. */
export function readVocabFile(path: string): string[] {
  if (!existsSync(path)) throw new VocabError(`vocab file not found: ${path}`)
  let content: string
  try {
    content = readFileSync(path, 'utf8')
  } catch (err) {
    throw new VocabError(`cannot read vocab file ${path}: ${(err as Error).message}`)
  }
  const tokens = parseVocabText(content)
  if (tokens.length === 0) throw new VocabError(`vocab file ${path} is empty`)
  return tokens
}
