// What every bench command does with its command line: a usage error names the bench and exits
// 2; progress goes to standard error.

export function benchCli(name: string): { fail: (msg: string) => never; log: (line: string) => void; positiveInt: (value: string, flag: string) => number } {
  const fail = (msg: string): never => {
    process.stderr.write(`${name}: ${msg}\n`)
    process.exit(2)
  }
  return {
    fail,
    log: (line: string) => process.stderr.write(`${line}\n`),
    positiveInt(value: string, flag: string): number {
      const n = Number(value)
      if (!Number.isInteger(n) || n < 1) fail(`${flag} must be a positive integer, got '${value}'`)
      return n
    },
  }
}
