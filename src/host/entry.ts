// Entry of the model host process. Built to out/main/modelHost.js (electron.vite.config.ts) and
// started with utilityProcess.fork by the Electron shell; under plain Node it is forked as
// TypeScript through tsx (./node.ts). The same code serves both: only the channel differs.
import { serve } from './server'

interface ParentPort {
  postMessage(message: unknown): void
  on(event: 'message', listener: (e: { data: unknown }) => void): void
}

const parentPort = (process as unknown as { parentPort?: ParentPort }).parentPort

if (parentPort) {
  // Electron utility process: MessagePortMain; the parent ends us when the app quits.
  serve({
    send: (m) => parentPort.postMessage(m),
    onMessage: (l) => parentPort.on('message', (e) => l(e.data as never)),
    exit: (code) => process.exit(code),
  })
} else if (typeof process.send === 'function') {
  // child_process.fork: the IPC channel; when the parent goes away, so do we (no orphaned training).
  process.on('disconnect', () => process.exit(0))
  serve({
    send: (m) => {
      if (process.connected) process.send!(m)
    },
    onMessage: (l) => process.on('message', (m) => l(m as never)),
    exit: (code) => process.exit(code),
  })
} else {
  console.error('fastbioner model host: started without a parent channel (use ModelHost, not node directly)')
  process.exit(2)
}
