// The Hub's plain HTTP API as `get` uses it: one request per hop (redirects are followed here, so
// that the token never leaves the Hub's origin and the Hub's own headers — X-Repo-Commit,
// X-Linked-Etag, X-Linked-Size — are read off the first response, as huggingface_hub does), and the
// Hub's error headers (X-Error-Code) turned into messages a user can act on.
//
// Transport: undici's request() with its EnvHttpProxyAgent, because Node 20's global fetch ignores
// HTTP(S)_PROXY / NO_PROXY and its bundled undici exposes no dispatcher class to pass one. The app
// (Electron) may later plug in its own `net` through the HubFetch type.

import { EnvHttpProxyAgent, request, type Dispatcher } from 'undici'

export type HubErrorKind = 'gated' | 'not-found' | 'auth' | 'network' | 'server' | 'integrity' | 'disk' | 'cancelled' | 'not-a-model' | 'usage'

/** A Hub download problem, said so that the user can act on it; `kind` for callers that branch. */
export class HubError extends Error {
  override name = 'HubError'
  constructor(
    readonly kind: HubErrorKind,
    message: string,
  ) {
    super(message)
  }
}

export interface HubResponse {
  status: number
  url: string
  /** A header's value (name case-insensitive), or undefined. */
  header(name: string): string | undefined
  body: AsyncIterable<Uint8Array>
  /** Reads and discards the body (a response not consumed keeps its connection busy). */
  dump(): Promise<void>
}

/** One HTTP GET, no redirect followed. */
export type HubFetch = (url: string, headers: Record<string, string>, signal?: AbortSignal) => Promise<HubResponse>

/**
 * The default transport: undici with EnvHttpProxyAgent (HTTP_PROXY, HTTPS_PROXY, NO_PROXY, lower
 * case too). A body that stalls for a minute fails like a dropped connection (and is resumed).
 */
export function undiciFetch(env: NodeJS.ProcessEnv = process.env): { fetch: HubFetch; close(): Promise<void> } {
  const dispatcher: Dispatcher = new EnvHttpProxyAgent({
    // From `env`, not process.env (tests pass their own); '' means none (https then uses the http proxy).
    httpProxy: env.http_proxy ?? env.HTTP_PROXY ?? '',
    httpsProxy: env.https_proxy ?? env.HTTPS_PROXY ?? '',
    noProxy: env.no_proxy ?? env.NO_PROXY ?? '',
    headersTimeout: 60_000,
    bodyTimeout: 60_000,
  })
  const fetch: HubFetch = async (url, headers, signal) => {
    const r = await request(url, { method: 'GET', headers, signal, dispatcher })
    return {
      status: r.statusCode,
      url,
      header: (name) => {
        const v = r.headers[name.toLowerCase()]
        return Array.isArray(v) ? v[0] : v
      },
      body: r.body,
      dump: async () => {
        await r.body.dump()
      },
    }
  }
  return { fetch, close: () => dispatcher.close() }
}

/** A network failure (connection refused, DNS, reset, timeout) rather than an HTTP answer. */
export function isNetworkError(e: unknown): boolean {
  if (e instanceof HubError) return e.kind === 'network'
  const code = (e as { code?: unknown })?.code
  return typeof code === 'string' && (/^(UND_ERR_|E(CONN|HOST|NET|AI_|PIPE|TIMEDOUT|PROTO))/.test(code) || code === 'ENOTFOUND')
}

export interface Hop {
  /** The Hub's own answer (a 302 to the CDN for LFS files): where X-Repo-Commit etc. are. */
  first: HubResponse
  /** The answer that carries the bytes (the same as first without a redirect). */
  final: HubResponse
}

/**
 * GET with redirects followed (at most 10). Authorization goes only to the origin the request
 * started at: a CDN on another host gets no token (as requests does on a host change).
 */
export async function getFollowing(fetch: HubFetch, url: string, headers: Record<string, string>, signal?: AbortSignal): Promise<Hop> {
  const origin = new URL(url).origin
  let current = url
  let first: HubResponse | undefined
  for (let hop = 0; hop <= 10; hop++) {
    const sameOrigin = new URL(current).origin === origin
    const h = sameOrigin ? headers : Object.fromEntries(Object.entries(headers).filter(([k]) => k.toLowerCase() !== 'authorization'))
    let res: HubResponse
    try {
      res = await fetch(current, h, signal)
    } catch (e) {
      if (signal?.aborted) throw new HubError('cancelled', 'download cancelled')
      throw new HubError('network', `cannot reach ${new URL(current).origin}: ${(e as Error).message}`)
    }
    first ??= res
    const location = res.header('location')
    if (res.status >= 300 && res.status < 400 && location) {
      await res.dump()
      current = new URL(location, current).toString()
      continue
    }
    return { first, final: res }
  }
  throw new HubError('server', `${url}: more than 10 redirects`)
}

/**
 * The HubError for a non-success answer about `repoId`: gated (accept the conditions and set
 * HF_TOKEN), not found (or private: the Hub answers 401 for both without a token), a bad token.
 */
export async function errorFor(res: HubResponse, repoId: string, what: string, hasToken: boolean, endpoint: string): Promise<HubError> {
  const code = res.header('x-error-code')
  const message = res.header('x-error-message')
  await res.dump().catch(() => {})
  const page = `${endpoint}/${repoId}`
  if (code === 'GatedRepo' || (res.status === 403 && !code)) {
    return new HubError(
      'gated',
      `${repoId} is a gated repository (HTTP ${res.status}): ${hasToken ? 'the token in HF_TOKEN has no access yet' : 'downloading it needs a token'}. ` +
        `Accept its conditions at ${page} while logged in, then set HF_TOKEN to a read token from ${endpoint}/settings/tokens and run the command again.`,
    )
  }
  if (code === 'RevisionNotFound') return new HubError('not-found', `${repoId}: ${what} — no such revision (branch, tag or commit) on ${endpoint}`)
  if (code === 'EntryNotFound') return new HubError('not-found', `${repoId}: ${what} — no such file in the repository`)
  if (res.status === 401 && message === 'Invalid credentials in Authorization header') {
    return new HubError('auth', `${repoId}: the Hub refused the token in HF_TOKEN (invalid credentials); check it at ${endpoint}/settings/tokens`)
  }
  if (code === 'RepoNotFound' || res.status === 401 || res.status === 404) {
    return new HubError(
      'not-found',
      `${repoId}: no such model on ${endpoint} (HTTP ${res.status})` +
        (hasToken ? '; check the spelling (org/name), and that your token can read it if it is private' : '; check the spelling (org/name); a private or gated model also needs HF_TOKEN'),
    )
  }
  return new HubError('server', `${repoId}: ${what} — the Hub answered HTTP ${res.status}${message ? ` (${message})` : ''}; try again later`)
}

/** A WHATWG fetch (Node's global fetch): what fetchAsHubFetch adapts. */
export type WhatwgFetch = (url: string, init: { headers: Record<string, string>; signal?: AbortSignal; redirect: 'manual' }) => Promise<Response>

/**
 * A HubFetch over a WHATWG fetch with redirect 'manual' (Node's fetch then answers the 3xx itself,
 * headers and all). Not Electron's net.fetch: there 'manual' fails with "Redirect was cancelled",
 * so the app adapts net.request instead (src/main/models/hub-transport.ts). Node's fetch ignores
 * HTTPS_PROXY: the default transport stays undiciFetch.
 */
export function fetchAsHubFetch(fetchFn: WhatwgFetch): HubFetch {
  return async (url, headers, signal) => {
    const r = await fetchFn(url, { headers, signal, redirect: 'manual' })
    const stream = r.body
    async function* body(): AsyncGenerator<Uint8Array> {
      if (!stream) return
      const reader = stream.getReader()
      try {
        for (;;) {
          const { done, value } = await reader.read()
          if (done) return
          yield value
        }
      } finally {
        reader.releaseLock()
      }
    }
    return {
      status: r.status,
      url,
      header: (name) => r.headers.get(name) ?? undefined,
      body: body(),
      dump: async () => {
        await stream?.cancel().catch(() => undefined)
      },
    }
  }
}
