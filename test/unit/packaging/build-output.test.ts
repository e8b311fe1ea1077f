// What the packaged app and `npm start` load: the electron-vite build in out/. Checks the build
// configuration always, and the build output when out/ exists (`npm test` builds first).
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { builtinModules } from 'node:module'
import { join, resolve } from 'node:path'
import viteConfig from '../../../electron.vite.config'

const root = resolve(__dirname, '../../..')
const out = join(root, 'out')
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
  main: string
  dependencies: Record<string, string>
  optionalDependencies?: Record<string, string>
}

interface Section {
  build?: { externalizeDeps?: unknown; rollupOptions?: { input?: Record<string, string>; output?: { format?: string } } }
}
const config = viteConfig as unknown as { main: Section; preload: Section }

/** out/main/index.js, modelHost.js and their shared chunks. */
function mainFiles(): string[] {
  const chunks = join(out, 'main/chunks')
  const shared = existsSync(chunks) ? readdirSync(chunks).map((f) => join(chunks, f)) : []
  return [join(out, 'main/index.js'), join(out, 'main/modelHost.js'), ...shared]
}

/** Module names a CommonJS bundle requires (require("x") as rolldown writes them). */
function requires(file: string): string[] {
  return [...readFileSync(file, 'utf8').matchAll(/\brequire\("([^"]+)"\)/g)].map((m) => m[1]!)
}

const packageName = (spec: string): string => (spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]!)
const isBuiltin = (spec: string): boolean => spec.startsWith('node:') || builtinModules.includes(spec)

describe('electron-vite configuration', () => {
  it('bundles every dependency into the sandboxed preload as one CommonJS file', () => {
    // A sandboxed preload can require only 'electron' and a few built-ins: zod (via
    // @shared/ipc) left external would make window.api disappear at start-up.
    expect(config.preload.build?.externalizeDeps).toBe(false)
    expect(config.preload.build?.rollupOptions?.output?.format).toBe('cjs')
  })

  it('builds the model host entry as out/main/modelHost.js beside the main process', () => {
    const input = config.main.build?.rollupOptions?.input ?? {}
    expect(input['index']).toBe(join(root, 'src/main/index.ts'))
    expect(input['modelHost']).toBe(join(root, 'src/host/entry.ts'))
    expect(pkg.main).toBe('out/main/index.js')
    // The shell forks that file from its own folder (dev, preview and packaged alike).
    expect(readFileSync(join(root, 'src/main/index.ts'), 'utf8')).toMatch(/utilityProcess\.fork\(join\(__dirname, 'modelHost\.js'\)/)
  })
})

const built = existsSync(join(out, 'main/index.js')) && existsSync(join(out, 'preload/index.js'))
if (!built) console.log('skipped: build output checks — out/ is missing (run `npx electron-vite build`; `npm test` does)')

describe.skipIf(!built)('build output (out/)', () => {
  it('has a preload that requires nothing but electron', () => {
    const allowed = new Set(['electron', 'events', 'timers', 'url', 'node:events', 'node:timers', 'node:url'])
    const needed = requires(join(out, 'preload/index.js'))
    expect(needed).toContain('electron')
    expect(needed.filter((m) => !allowed.has(m))).toEqual([])
  })

  it('has the model host entry, and it does not load electron', () => {
    const host = join(out, 'main/modelHost.js')
    expect(existsSync(host)).toBe(true)
    const hostClosure = new Set<string>()
    const visit = (file: string) => {
      if (hostClosure.has(file)) return
      hostClosure.add(file)
      for (const m of requires(file)) if (m.startsWith('./') || m.startsWith('../')) visit(resolve(file, '..', m))
    }
    visit(host)
    for (const f of hostClosure) expect(requires(f), f).not.toContain('electron')
    expect([...hostClosure].every((f) => mainFiles().includes(f))).toBe(true)
  })

  it('requires from node_modules only production dependencies (devDependencies are not in the installers)', () => {
    const production = new Set([...Object.keys(pkg.dependencies), ...Object.keys(pkg.optionalDependencies ?? {})])
    for (const f of mainFiles()) {
      for (const m of requires(f)) {
        if (m.startsWith('.') || isBuiltin(m) || m === 'electron') continue
        expect(production.has(packageName(m)), `${f} requires ${m}`).toBe(true)
      }
    }
  })
})
