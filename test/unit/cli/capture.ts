import { vi } from 'vitest'

/** Runs a command's run(), capturing what it writes to stdout and stderr. */
export async function capture(fn: () => Promise<number>): Promise<{ code: number; out: string; err: string }> {
  let out = ''
  let err = ''
  const o = vi.spyOn(process.stdout, 'write').mockImplementation((c: string | Uint8Array) => ((out += String(c)), true))
  const e = vi.spyOn(process.stderr, 'write').mockImplementation((c: string | Uint8Array) => ((err += String(c)), true))
  try {
    const code = await fn()
    return { code, out, err }
  } finally {
    o.mockRestore()
    e.mockRestore()
  }
}
