// The one launcher of the PyTorch references: the BLAS settings that made two benches disagree
// (a pinned OPENBLAS_CORETYPE) never reach PyTorch, and the rest of the environment does.
import { describe, expect, it } from 'vitest'
import { MAX_ROUND_SPREAD, NOISY_CORES, ratioToTorch, roundsRatioToTorch, torchEnv } from '../../../bench/torch-ref'

describe('torchEnv', () => {
  it('removes the OpenBLAS core type and L2 size, keeps the rest, and points at the OpenMP OpenBLAS', () => {
    const env = torchEnv({ OPENBLAS_CORETYPE: 'Haswell', OPENBLAS_L2_SIZE: '1048576', OMP_NUM_THREADS: '1', PATH: '/usr/bin' }, '/opt/openblas-openmp')
    expect(env.OPENBLAS_CORETYPE).toBeUndefined()
    expect(env.OPENBLAS_L2_SIZE).toBeUndefined()
    expect(env).toMatchObject({ OMP_NUM_THREADS: '1', PATH: '/usr/bin', LD_LIBRARY_PATH: '/opt/openblas-openmp' })
    expect(torchEnv({ PATH: '/usr/bin' }, null).LD_LIBRARY_PATH).toBeUndefined()
  })
})

describe('ratioToTorch', () => {
  it('prints the ratio on a quiet machine, withholds it when other processes were busy unless allowed, and says why', () => {
    expect(ratioToTorch(3000, 2000, [0.02, 0.1], false)).toBe('1.500×')
    expect(ratioToTorch(3000, 2000, [0.02, NOISY_CORES + 0.05], false)).toBe('noisy (0.20 other cores; --allow-noisy prints it)')
    expect(ratioToTorch(3000, 2000, [0.9], true)).toBe('1.500×')
    expect(ratioToTorch(3000, null, [], false)).toBe('–')
    expect(ratioToTorch(3000, 0, [], false)).toBe('–')
  })
})

describe('roundsRatioToTorch', () => {
  it("prints the rounds' median when they agree, withholds it when they disagree or the machine was busy", () => {
    expect(roundsRatioToTorch([1.416, 1.418], [0.03], false)).toBe('1.417×')
    expect(roundsRatioToTorch([1.5, null, 1.52, 1.49], [0.01], false)).toBe('1.500×')
    // session 18's 8 000-piece row: PyTorch moved between the rounds
    expect(roundsRatioToTorch([1.312, 1.729], [0.01], false)).toBe('unsteady (rounds 1.31–1.73×; --allow-noisy prints the median)')
    expect(roundsRatioToTorch([1.312, 1.729], [0.01], true)).toBe('1.521×')
    expect(roundsRatioToTorch([1, 1 + MAX_ROUND_SPREAD / 2], [0.9], false)).toMatch(/^noisy/)
    expect(roundsRatioToTorch([null], [], false)).toBe('–')
  })
})
