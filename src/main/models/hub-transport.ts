// The app's transport for core/hub: Electron's net.request on a session of its own, so downloads
// follow the system's proxy settings (Node's fetch ignores them). Written against the few members
// it uses, so this file imports nothing from Electron (src/main/index.ts passes `net.request` and
// the session). Why not net.fetch: with redirect 'manual' it fails with "Redirect was cancelled",
// and core/hub must see the Hub's 302 itself (X-Linked-Etag, X-Repo-Commit, no token to the CDN).
import type { HubFetch, HubResponse } from '../../core/hub/http'

type Headers = Record<string, string | string[] | undefined>

/** The part of Electron's IncomingMessage used here: a Readable of Buffers. */
interface NetResponse extends AsyncIterable<Uint8Array> {
  statusCode: number
  headers: Headers
  resume(): void
}

/** The part of Electron's ClientRequest used here. */
export interface NetRequest {
  setHeader(name: string, value: string): void
  on(event: 'response', listener: (res: NetResponse) => void): unknown
  on(event: 'redirect', listener: (statusCode: number, method: string, redirectUrl: string, headers: Headers) => void): unknown
  on(event: 'error', listener: (error: Error) => void): unknown
  abort(): void
  end(): void
}

export type NetRequestFn = (options: { url: string; method: 'GET'; redirect: 'manual'; credentials: 'omit'; cache: 'no-store' }) => NetRequest

/** Chromium's network stack sets these itself (and refuses some of them). */
const MANAGED = new Set(['host', 'connection', 'content-length', 'accept-encoding'])

const first = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v)

export function netHubFetch(request: NetRequestFn): HubFetch {
  return (url, headers, signal) =>
    new Promise<HubResponse>((resolve, reject) => {
      if (signal?.aborted) return reject(new Error('aborted'))
      const req = request({ url, method: 'GET', redirect: 'manual', credentials: 'omit', cache: 'no-store' })
      for (const [k, v] of Object.entries(headers)) if (!MANAGED.has(k.toLowerCase())) req.setHeader(k, v)
      let settled = false
      const onAbort = () => {
        req.abort()
        if (!settled) reject(new Error('aborted'))
        settled = true
      }
      signal?.addEventListener('abort', onAbort, { once: true })
      const answer = (status: number, h: Headers, body: AsyncIterable<Uint8Array>, dump: () => Promise<void>) => {
        if (settled) return
        settled = true
        resolve({ status, url, header: (name) => first(h[name.toLowerCase()]), body, dump })
      }
      // The 3xx is answered as it is (no body); core/hub follows its Location.
      req.on('redirect', (status, _method, redirectUrl, h) => {
        answer(status, { ...h, location: first(h.location) ?? redirectUrl }, (async function* () {})(), async () => undefined)
        req.abort()
      })
      req.on('response', (res) =>
        answer(res.statusCode, res.headers, res, async () => {
          res.resume()
        }),
      )
      req.on('error', (e) => {
        if (!settled) reject(e)
        settled = true
      })
      req.end()
    })
}
