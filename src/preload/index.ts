// Exposes the typed IPC bridge; no logic beyond the channel whitelist.
import { contextBridge, ipcRenderer, type IpcRendererEvent } from 'electron'
import { BRIDGE_GLOBAL, CHANNELS, EVENT_NAMES, type BridgeApi, type Channel, type EventName } from '@shared/ipc'

const channels = new Set<string>(CHANNELS)
const events = new Set<string>(EVENT_NAMES)

const api: BridgeApi = {
  invoke(channel, request) {
    if (!channels.has(channel)) return Promise.reject(new Error(`unknown channel ${String(channel)}`))
    return ipcRenderer.invoke(channel as Channel, request)
  },
  on(event, listener) {
    if (!events.has(event)) throw new Error(`unknown event ${String(event)}`)
    const wrapped = (_e: IpcRendererEvent, payload: unknown) => listener(payload as never)
    ipcRenderer.on(event as EventName, wrapped)
    return () => ipcRenderer.removeListener(event, wrapped)
  },
}

contextBridge.exposeInMainWorld(BRIDGE_GLOBAL, api)
