// The one launcher of the PyTorch references: the BLAS settings that made two benches disagree
// (a pinned OPENBLAS_CORETYPE) never reach PyTorch, and the rest of the environment does.
import { describe, expect, it } from 'vitest'
import { NOISY_CORES, ratioToTorch, torchEnv } from '../../../bench/torch-ref'

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
