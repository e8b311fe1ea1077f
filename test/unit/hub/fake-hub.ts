// A fake Hugging Face Hub on 127.0.0.1 for the `get` tests: the model-info API with ?blobs=true,
// /resolve/ answering small files itself (ETag = git blob id) and LFS files with a 302 to a CDN on
// another origin (X-Linked-Etag = sha256, X-Linked-Size, X-Repo-Commit), Range requests there,
// the Hub's error headers (RepoNotFound 401, RevisionNotFound 404, GatedRepo 401), and faults
// on demand: a connection dropped half-way, a corrupted body, a server that ignores Range.
import { createHash } from 'node:crypto'
import { createServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import { connect, type AddressInfo, type Socket } from 'node:net'

export interface FakeFile {
  bytes: Buffer
  lfs: boolean
}

export interface FakeRepo {
  commit: string
  files: Record<string, FakeFile>
  /** Files need `Authorization: Bearer <token>`. */
  gatedToken?: string
}

export interface Logged {
  server: 'hub' | 'cdn'
  path: string
  range?: string
  authorization?: string
}

export const sha256 = (b: Uint8Array) => createHash('sha256').update(b).digest('hex')
export const gitBlobId = (b: Uint8Array) => createHash('sha1').update(`blob ${b.byteLength}\0`).update(b).digest('hex')
export const etagOf = (f: FakeFile) => (f.lfs ? sha256(f.bytes) : gitBlobId(f.bytes))

export class FakeHub {
  readonly repos = new Map<string, FakeRepo>()
  readonly log: Logged[] = []
  /** sha256s whose next CDN answer stops after half the bytes (the socket is destroyed). */
  readonly dropOnce = new Set<string>()
  /** sha256s served with one byte flipped. */
  readonly corrupt = new Set<string>()
  /** Small files served with other bytes than the model info lists (by file name). */
  readonly tamper = new Map<string, Buffer>()
  /** The CDN ignores Range and answers 200 with the whole file. */
  ignoreRange = false
  private hub!: Server
  private cdn!: Server
  private sockets = new Set<Socket>()
  hubUrl = ''
  cdnUrl = ''

  async start(): Promise<void> {
    this.hub = createServer((req, res) => this.onHub(req, res))
    this.cdn = createServer((req, res) => this.onCdn(req, res))
    for (const s of [this.hub, this.cdn]) {
      s.on('connection', (c) => {
        this.sockets.add(c)
        c.on('close', () => this.sockets.delete(c))
      })
      await new Promise<void>((r) => s.listen(0, '127.0.0.1', r))
    }
    this.hubUrl = `http://127.0.0.1:${(this.hub.address() as AddressInfo).port}`
    this.cdnUrl = `http://127.0.0.1:${(this.cdn.address() as AddressInfo).port}`
  }

  async stop(): Promise<void> {
    for (const c of this.sockets) c.destroy()
    await Promise.all([this.hub, this.cdn].map((s) => new Promise((r) => s.close(r))))
  }

  private record(server: 'hub' | 'cdn', req: IncomingMessage): void {
    this.log.push({ server, path: req.url ?? '', range: req.headers.range, authorization: req.headers.authorization })
  }

  private error(res: ServerResponse, status: number, code: string): void {
    res.writeHead(status, { 'X-Error-Code': code, 'X-Error-Message': code, 'Content-Type': 'application/json' })
    res.end(JSON.stringify({ error: code }))
  }

  private onHub(req: IncomingMessage, res: ServerResponse): void {
    this.record('hub', req)
    const url = new URL(req.url ?? '/', this.hubUrl)
    let m = /^\/api\/models\/([^/]+\/[^/]+)\/revision\/([^/]+)$/.exec(url.pathname)
    if (m) {
      const repo = this.repos.get(m[1])
      if (!repo) return this.error(res, 401, 'RepoNotFound')
      const rev = decodeURIComponent(m[2])
      if (rev !== 'main' && rev !== repo.commit) return this.error(res, 404, 'RevisionNotFound')
      const blobs = url.searchParams.get('blobs') === 'true'
      const siblings = Object.entries(repo.files).map(([name, f]) => ({
        rfilename: name,
        ...(blobs ? { size: f.bytes.byteLength, blobId: gitBlobId(f.lfs ? Buffer.from(`pointer ${sha256(f.bytes)}`) : f.bytes) } : {}),
        ...(blobs && f.lfs ? { lfs: { sha256: sha256(f.bytes), size: f.bytes.byteLength, pointerSize: 130 } } : {}),
      }))
      res.writeHead(200, { 'Content-Type': 'application/json' })
      res.end(JSON.stringify({ id: m[1], sha: repo.commit, gated: repo.gatedToken ? 'auto' : false, siblings }))
      return
    }
    m = /^\/([^/]+\/[^/]+)\/resolve\/([^/]+)\/(.+)$/.exec(url.pathname)
    if (!m) return this.error(res, 404, 'NotFound')
    const repo = this.repos.get(m[1])
    if (!repo) return this.error(res, 401, 'RepoNotFound')
    if (repo.gatedToken && req.headers.authorization !== `Bearer ${repo.gatedToken}`) return this.error(res, 401, 'GatedRepo')
    const rev = decodeURIComponent(m[2])
    if (rev !== 'main' && rev !== repo.commit) return this.error(res, 404, 'RevisionNotFound')
    const file = repo.files[decodeURIComponent(m[3])]
    if (!file) return this.error(res, 404, 'EntryNotFound')
    const common = { 'X-Repo-Commit': repo.commit }
    if (file.lfs) {
      const sha = sha256(file.bytes)
      res.writeHead(302, { ...common, Location: `${this.cdnUrl}/blobs/${sha}?signed=1`, 'X-Linked-Etag': `"${sha}"`, 'X-Linked-Size': String(file.bytes.byteLength), ETag: '"pointer-etag"' })
      res.end()
      return
    }
    // A tampered file keeps the listed ETag: only its content gives it away.
    this.serve(req, res, this.tamper.get(decodeURIComponent(m[3])) ?? file.bytes, { ...common, ETag: `"${gitBlobId(file.bytes)}"` }, false)
  }

  private onCdn(req: IncomingMessage, res: ServerResponse): void {
    this.record('cdn', req)
    const sha = /^\/blobs\/([0-9a-f]{64})/.exec(req.url ?? '')?.[1]
    const file = [...this.repos.values()].flatMap((r) => Object.values(r.files)).find((f) => f.lfs && sha256(f.bytes) === sha)
    if (!sha || !file) return this.error(res, 404, 'NoSuchKey')
    let bytes = file.bytes
    if (this.corrupt.has(sha)) {
      bytes = Buffer.from(bytes)
      bytes[bytes.length >> 1] ^= 0xff
    }
    const drop = this.dropOnce.delete(sha)
    this.serve(req, res, bytes, { ETag: `"cdn-${sha.slice(0, 8)}"` }, drop)
  }

  private serve(req: IncomingMessage, res: ServerResponse, bytes: Buffer, headers: Record<string, string>, drop: boolean): void {
    const range = /^bytes=(\d+)-$/.exec(req.headers.range ?? '')
    let start = 0
    let status = 200
    if (range && !this.ignoreRange) {
      start = Number(range[1])
      if (start >= bytes.length) {
        res.writeHead(416, { 'Content-Range': `bytes */${bytes.length}` })
        res.end()
        return
      }
      status = 206
      headers = { ...headers, 'Content-Range': `bytes ${start}-${bytes.length - 1}/${bytes.length}` }
    }
    const body = bytes.subarray(start)
    res.writeHead(status, { ...headers, 'Content-Length': String(body.length), 'Accept-Ranges': 'bytes' })
    if (!drop) {
      res.end(body)
      return
    }
    // Half the body, flushed, then the connection goes away.
    res.write(body.subarray(0, body.length >> 1), () => setTimeout(() => res.socket?.destroy(), 20))
  }
}

/**
 * An HTTP proxy (CONNECT tunnels and absolute-form requests) that counts what goes through it:
 * shows that HTTP_PROXY is honoured.
 */
export async function startProxy(): Promise<{ url: string; seen: string[]; stop(): Promise<void> }> {
  const seen: string[] = []
  const sockets = new Set<Socket>()
  const server = createServer((req, res) => {
    seen.push(`GET ${req.url}`)
    const target = new URL(req.url ?? '')
    const up = httpRequest({ host: target.hostname, port: target.port, path: target.pathname + target.search, method: req.method, headers: req.headers }, (r) => {
      res.writeHead(r.statusCode ?? 502, r.headers)
      r.pipe(res)
    })
    req.pipe(up)
  })
  server.on('connect', (req: IncomingMessage, client: Socket, head: Buffer) => {
    seen.push(`CONNECT ${req.url}`)
    const [host, port] = (req.url ?? '').split(':')
    const up = connect(Number(port), host, () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n')
      up.write(head)
      up.pipe(client)
      client.pipe(up)
    })
    sockets.add(up).add(client)
    up.on('error', () => client.destroy())
    client.on('error', () => up.destroy())
  })
  server.on('connection', (c) => sockets.add(c))
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    stop: async () => {
      for (const s of sockets) s.destroy()
      await new Promise((r) => server.close(r))
    },
  }
}
