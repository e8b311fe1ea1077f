// The app's Hub transport (src/main/models/hub-transport.ts: netHubFetch over Electron's
// net.request) driven by core/hub's getModel against the fake Hub. Electron is not in the test
// run, so `request` is a stand-in over node:http that keeps the ClientRequest behaviour the
// adapter relies on: with redirect 'manual' a 3xx is a 'redirect' event (never a 'response'), and
// the request dies unless followRedirect() is called; the body is an IncomingMessage.
import { EventEmitter } from 'node:events'
import { request as httpRequest, type ClientRequest, type IncomingMessage } from 'node:http'
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { getModel, HubError } from '@core/hub/download'
import { netHubFetch, type NetRequest, type NetRequestFn } from '../../../src/main/models/hub-transport'
import { FakeHub, sha256, type FakeFile } from './fake-hub'

const FIXTURE = join(__dirname, '../../fixtures/torch/fp32')
const COMMIT = 'e'.repeat(40)
const tiny: Record<string, FakeFile> = Object.fromEntries(
  readdirSync(FIXTURE).map((f) => [f, { bytes: readFileSync(join(FIXTURE, f)), lfs: f === 'pytorch_model.bin' }]),
)
const hub = new FakeHub()
const root = mkdtempSync(join(tmpdir(), 'fastbioner-net-'))
const seen: Array<{ url: string; headers: Record<string, string>; options: Parameters<NetRequestFn>[0] }> = []

/** Electron's ClientRequest, as far as netHubFetch uses it, over node:http. */
const fakeNetRequest: NetRequestFn = (options) => {
  const events = new EventEmitter()
  const headers: Record<string, string> = {}
  let req: ClientRequest | null = null
  let aborted = false
  const r: NetRequest = {
    setHeader(name, value) {
      if (['host', 'connection', 'content-length'].includes(name.toLowerCase())) throw new Error(`net refuses header ${name}`)
      headers[name] = value
    },
    on(event: string, listener: (...args: never[]) => void) {
      events.on(event, listener as (...args: unknown[]) => void)
      return r
    },
    abort() {
      aborted = true
      req?.destroy()
    },
    end() {
      seen.push({ url: options.url, headers: { ...headers }, options })
      req = httpRequest(options.url, { headers }, (res: IncomingMessage) => {
        const status = res.statusCode ?? 0
        if (status >= 300 && status < 400 && res.headers.location) {
          res.resume()
          events.emit('redirect', status, 'GET', new URL(res.headers.location, options.url).toString(), res.headers)
          // Nobody called followRedirect(): Electron ends the request with this error.
          if (!aborted) events.emit('error', new Error('Redirect was cancelled'))
          return
        }
        events.emit('response', Object.assign(res, { statusCode: status }))
      })
      req.on('error', (e) => events.emit('error', e))
      req.end()
    },
  }
  return r
}

beforeAll(async () => {
  await hub.start()
  hub.repos.set('org/tiny-bert', { commit: COMMIT, files: tiny })
  hub.repos.set('org/gated-bert', { commit: COMMIT, files: tiny, gatedToken: 'hf_good' })
})
afterAll(async () => {
  await hub.stop()
  rmSync(root, { recursive: true, force: true })
})

test("getModel over netHubFetch: the Hub's 302 is seen (X-Linked-Etag checked, no token to the CDN), a dropped connection resumed with Range, the files byte-equal", async () => {
  const weights = tiny['pytorch_model.bin']!.bytes
  hub.dropOnce.add(sha256(weights))
  const r = await getModel({
    repoId: 'org/tiny-bert',
    cacheDir: join(root, 'a'),
    env: { HF_ENDPOINT: hub.hubUrl, HF_TOKEN: 'hf_secret' },
    fetch: netHubFetch(fakeNetRequest),
  })
  for (const f of r.files) expect(readFileSync(join(r.dir, f))).toEqual(tiny[f]!.bytes)
  const cdn = seen.filter((s) => s.url.startsWith(hub.cdnUrl))
  expect(cdn.length).toBe(2)
  expect(cdn[1]!.headers.Range).toMatch(/^bytes=\d+-$/)
  expect(cdn.every((s) => !('Authorization' in s.headers))).toBe(true)
  expect(seen.filter((s) => s.url.startsWith(hub.hubUrl)).every((s) => s.headers.Authorization === 'Bearer hf_secret')).toBe(true)
  // Chromium negotiates the encoding itself; cookies and the session's credentials are never sent.
  expect(seen.every((s) => !('Accept-Encoding' in s.headers) && s.options.credentials === 'omit' && s.options.redirect === 'manual')).toBe(true)
})

test('a gated repository through netHubFetch is a gated HubError; an aborted signal rejects without a request', async () => {
  const env = { HF_ENDPOINT: hub.hubUrl }
  const gated = await getModel({ repoId: 'org/gated-bert', cacheDir: join(root, 'b'), env, fetch: netHubFetch(fakeNetRequest) }).catch((e: unknown) => e)
  expect(gated).toBeInstanceOf(HubError)
  expect((gated as HubError).kind).toBe('gated')
  const before = seen.length
  const controller = new AbortController()
  controller.abort()
  await expect(netHubFetch(fakeNetRequest)(`${hub.hubUrl}/api/models/org/tiny-bert`, {}, controller.signal)).rejects.toThrow(/aborted/)
  expect(seen.length).toBe(before)
})
