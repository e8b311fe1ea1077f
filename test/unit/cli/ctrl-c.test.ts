// The one Ctrl-C handler of the long-running commands (train, distill, pretrain, tag --out-dir).
import { afterEach, describe, expect, it, vi } from 'vitest'
import { stopOnCtrlC } from '../../../src/cli/commands/_ml'

/** Calls the handler stopOnCtrlC installed (the last SIGINT listener), not the test runner's own. */
const sigint = () => (process.listeners('SIGINT').at(-1) as () => void)()

describe('stopOnCtrlC', () => {
  afterEach(() => vi.restoreAllMocks())

  it('aborts the run on the first Ctrl-C and says what is kept; release() removes the handler', () => {
    const lines: string[] = []
    const before = process.listenerCount('SIGINT')
    const stop = stopOnCtrlC((l) => lines.push(l), 'stopping; kept')
    expect(process.listenerCount('SIGINT')).toBe(before + 1)
    expect(stop.signal.aborted).toBe(false)
    sigint()
    expect(stop.signal.aborted).toBe(true)
    expect(lines).toEqual(['stopping; kept'])
    stop.release()
    expect(process.listenerCount('SIGINT')).toBe(before)
  })

  it('with exitOnSecond, a second Ctrl-C exits at once with 130; without, it only repeats the message', () => {
    const exit = vi.spyOn(process, 'exit').mockImplementation((() => undefined) as never)
    const lines: string[] = []
    const patient = stopOnCtrlC((l) => lines.push(l), 'patient')
    sigint()
    sigint()
    expect(exit).not.toHaveBeenCalled()
    expect(lines).toEqual(['patient', 'patient'])
    patient.release()

    const hasty = stopOnCtrlC(() => {}, 'hasty', { exitOnSecond: true })
    sigint()
    expect(exit).not.toHaveBeenCalled()
    sigint()
    expect(exit).toHaveBeenCalledWith(130)
    hasty.release()
  })
})
