// What the renderer gets from the handler table: the answer after the structured clone that
// Electron's IPC makes of it (so a value that could not cross IPC fails here too), as a value
// or as the error the channel was refused with.
import type { Channel, IpcErrorShape, ResponseOf } from '@shared/ipc'
import { dispatch, type Handlers } from '../../src/main/api'

/** The channel's value; throws with the error's code and message when it was refused. */
export async function callOk<C extends Channel>(h: Handlers, channel: C, payload: unknown): Promise<ResponseOf<C>> {
  const r = structuredClone(await dispatch(h, channel, payload))
  if (!r.ok) throw new Error(`${channel} failed: ${r.error.code}: ${r.error.message}`)
  return r.value
}

/** The error the channel was refused with; `channel` may be any string, to test unknown channels. Throws when it succeeded. */
export async function callError(h: Handlers, channel: Channel | string, payload: unknown): Promise<IpcErrorShape> {
  const r = structuredClone(await dispatch(h, channel as Channel, payload))
  if (r.ok) throw new Error(`${channel} unexpectedly succeeded: ${JSON.stringify(r.value)}`)
  return r.error
}
