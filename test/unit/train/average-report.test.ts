// `train --average-last N`: when the average of the last epochs is kept, the done line and the
// JSON summary name that average, not the last epoch it was saved under (issue 27: "best epoch 3").
import { describe, expect, it } from 'vitest'
import { logDone, runSummary } from '../../../src/cli/commands/train'

const dev = (f1: number) => ({ precision: f1, recall: f1, f1 })
const outcome = (averaged: { epochs: number[]; dev: ReturnType<typeof dev>; kept: boolean } | null) => ({
  steps: 30, plannedSteps: 30, epochs: [1, 2, 3].map((epoch) => ({ epoch, step: epoch * 10, seconds: 1, dev: dev(0.5 + epoch / 10) })) as never,
  // As the loop reports a kept average: saved under the last averaged epoch, with the average's F1.
  bestEpoch: 3, bestDevF1: averaged?.kept ? averaged.dev.f1 : 0.8, checkpointDir: '/m', cancelled: false, stoppedEarly: false,
  trainTokens: 100, tokensPerSecond: 10, trainSeconds: 10, evalSeconds: 1, trainExamples: 10, wallSeconds: 12, averaged,
})

function doneLine(r: ReturnType<typeof outcome>): string {
  const lines: string[] = []
  logDone((l) => lines.push(l), r)
  expect(lines).toHaveLength(1)
  return lines[0]
}

describe('train report with checkpoint averaging', () => {
  it('names the averaged epochs when the average is kept', () => {
    const r = outcome({ epochs: [2, 3], dev: dev(0.85), kept: true })
    const line = doneLine(r)
    expect(line).toMatch(/kept the average of epochs 2, 3 \(devel F1 0\.8500\)/)
    expect(line).not.toMatch(/best epoch/)
    const s = runSummary(r)
    expect(s.best_epoch).toBeNull()
    expect(s.kept_average_of_epochs).toEqual([2, 3])
    expect(s.best_dev_f1).toBe(0.85)
  })

  it('names the best epoch when the average is not kept, or there is none', () => {
    for (const r of [outcome({ epochs: [2, 3], dev: dev(0.7), kept: false }), outcome(null)]) {
      expect(doneLine(r)).toMatch(/best epoch 3 \(devel F1 0\.8000\)/)
      expect(runSummary(r)).toMatchObject({ best_epoch: 3, kept_average_of_epochs: null, best_dev_f1: 0.8 })
    }
  })
})
