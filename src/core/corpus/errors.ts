import type { CorpusIssue } from '@shared/domain'

/** `file:line: message` (or `file: message` when the problem has no line). */
export function formatIssue(issue: CorpusIssue): string {
  const where = issue.line !== undefined ? `${issue.file}:${issue.line}` : issue.file
  return `${where}: ${issue.message}`
}

/**
 * A corpus file that cannot be read. The whole file is rejected (readers are all or nothing);
 * `issues` holds every error found (up to a cap) plus the warnings gathered before the stop.
 */
export class CorpusError extends Error {
  override name = 'CorpusError'
  readonly issues: CorpusIssue[]

  constructor(issues: CorpusIssue | CorpusIssue[]) {
    const list = Array.isArray(issues) ? issues : [issues]
    const errors = list.filter((i) => i.severity === 'error')
    const first = errors[0] ?? list[0] ?? { severity: 'error', file: '(unknown)', message: 'unreadable corpus' }
    const more = errors.length > 1 ? ` (and ${errors.length - 1} more error${errors.length > 2 ? 's' : ''})` : ''
    super(formatIssue(first) + more)
    this.issues = list.length > 0 ? list : [first as CorpusIssue]
  }

  /** Convenience for the common single-error case. */
  static at(file: string, line: number | undefined, message: string): CorpusError {
    return new CorpusError({ severity: 'error', file, ...(line !== undefined ? { line } : {}), message })
  }

  /** The first error's file and line, for callers that show one location. */
  get file(): string {
    return this.firstError.file
  }

  get line(): number | undefined {
    return this.firstError.line
  }

  get errors(): CorpusIssue[] {
    return this.issues.filter((i) => i.severity === 'error')
  }

  private get firstError(): CorpusIssue {
    return this.issues.find((i) => i.severity === 'error') ?? this.issues[0]!
  }
}

const MAX_ERRORS = 50
const MAX_WARNINGS = 1000

/**
 * Collects issues while a reader walks a file. Errors are gathered (so a user sees several at once)
 * and thrown together by `finish()`; reading stops early once MAX_ERRORS pile up.
 */
export class IssueLog {
  readonly warnings: CorpusIssue[] = []
  readonly errors: CorpusIssue[] = []
  private suppressedWarnings = 0

  /** textOnly: mention problems are warnings (the reader's ReadOptions.textOnly). */
  constructor(
    readonly file: string,
    readonly textOnly = false,
  ) {}

  /** A mention that cannot be used: an error, or with textOnly a warning (the text is still read). */
  mentionProblem(line: number | undefined, message: string): void {
    if (this.textOnly) this.warn(line, `${message}; the mention is left out (only the text is used)`)
    else this.error(line, message)
  }

  warn(line: number | undefined, message: string): void {
    if (this.warnings.length >= MAX_WARNINGS) {
      this.suppressedWarnings++
      return
    }
    this.warnings.push(issue('warning', this.file, line, message))
  }

  error(line: number | undefined, message: string): void {
    this.errors.push(issue('error', this.file, line, message))
    if (this.errors.length >= MAX_ERRORS) throw this.failure()
  }

  /** Records the error and throws immediately: for problems after which nothing else can be read. */
  fatal(line: number | undefined, message: string): never {
    this.errors.push(issue('error', this.file, line, message))
    throw this.failure()
  }

  get hasErrors(): boolean {
    return this.errors.length > 0
  }

  failure(): CorpusError {
    return new CorpusError(this.report())
  }

  /** Every issue, errors first, without throwing (readers that skip bad records and go on). */
  report(): CorpusIssue[] {
    return [...this.errors, ...this.allWarnings()]
  }

  /** Throws the collected errors, if any; otherwise returns the warnings. */
  finish(): CorpusIssue[] {
    if (this.errors.length > 0) throw this.failure()
    return this.allWarnings()
  }

  private allWarnings(): CorpusIssue[] {
    if (this.suppressedWarnings === 0) return this.warnings
    return [...this.warnings, issue('warning', this.file, undefined, `${this.suppressedWarnings} more warnings not shown`)]
  }
}

function issue(severity: CorpusIssue['severity'], file: string, line: number | undefined, message: string): CorpusIssue {
  return line !== undefined ? { severity, file, line, message } : { severity, file, message }
}

const FS_PROBLEMS: Record<string, string> = {
  ENOENT: 'no such file or folder',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  EEXIST: 'already exists',
  ENOTDIR: 'a part of the path is a file, not a folder',
  EISDIR: 'is a folder, not a file',
  ENOTEMPTY: 'the folder is not empty',
  ENOSPC: 'no space left on the device',
  EROFS: 'read-only file system',
  EMFILE: 'too many open files',
  EXDEV: 'cannot move across file systems',
}

/** A file-system error in words ("no such file or folder (ENOENT)"), not a bare code. */
export function fsProblem(e: unknown): string {
  const code = (e as NodeJS.ErrnoException)?.code
  if (code !== undefined && FS_PROBLEMS[code] !== undefined) return `${FS_PROBLEMS[code]} (${code})`
  return e instanceof Error ? e.message : String(e)
}
