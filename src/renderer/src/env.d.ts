/// <reference types="vite/client" />
import type { BridgeApi } from '@shared/ipc'

declare global {
  interface Window {
    /** Exposed by the preload (Electron) or emulated by the e2e harness. */
    api?: BridgeApi
  }
}

export {}
