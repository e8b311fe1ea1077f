// The model host: model work in a process of its own (see host.ts for why). The Electron shell
// builds a ModelHost over utilityProcess (src/main/index.ts); plain Node uses createNodeModelHost.
export { errorFromHost, HostCrashError, ModelHost, type HostChannel, type HostSpawner, type ModelHostOptions, type RequestOptions } from './client'
export { childProcessChannel, createNodeModelHost, type NodeModelHostOptions } from './node'
export type { HostMethod, HostMethods, HostParams, HostProgress, HostResult } from './protocol'
