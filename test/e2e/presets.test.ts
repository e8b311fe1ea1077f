// The renderer keeps its own copy of the model presets (importing a value from @shared/ipc would
// bundle zod into the page); this keeps the copy equal to the contract's list.
import { MODEL_PRESETS } from '@shared/ipc'
import { RENDERER_PRESETS } from '../../src/renderer/src/models/ModelsView'

describe('renderer model presets', () => {
  it('match MODEL_PRESETS in the IPC contract', () => {
    expect(RENDERER_PRESETS).toEqual(MODEL_PRESETS)
  })
})
