// Checks the installer configuration (electron-builder.config.cjs) without building installers:
// electron-builder cannot download Electron or its packaging tools everywhere we test.
// File selection and asar unpacking are evaluated with electron-builder's own matchers
// (app-builder-lib, reached through electron-builder so the versions always agree), against the
// repository and the production node_modules actually installed.
import { existsSync, lstatSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { isAbsolute, join, posix, relative, resolve, sep } from 'node:path'
import type { Configuration } from 'electron-builder'

const root = resolve(__dirname, '../../..')
const CONFIG_FILE = 'electron-builder.config.cjs'
const requireHere = createRequire(__filename)
// app-builder-lib is electron-builder's implementation; resolving it from electron-builder pins
// the copy the builder itself runs. Its internals are untyped here, hence the small interfaces.
const requireBuilder = createRequire(requireHere.resolve('electron-builder'))

interface StatLike {
  isDirectory(): boolean
  moduleFullFilePath?: string
}
type Filter = (file: string, stat: StatLike) => boolean
interface FileMatcherLike {
  from: string
  to: string
  patterns: string[]
  isEmpty(): boolean
  containsOnlyIgnore(): boolean
  prependPattern(pattern: string): void
  createFilter(): Filter
}
interface FileMatcherModule {
  excludedNames: string
  excludedExts: string
  getMainFileMatchers(
    appDir: string,
    destination: string,
    macroExpander: (p: string) => string,
    platformOptions: unknown,
    platformPackager: unknown,
    outDir: string,
    isElectronCompile: boolean,
  ): FileMatcherLike[]
  getNodeModuleFileMatcher(
    appDir: string,
    destination: string,
    macroExpander: (p: string) => string,
    platformOptions: unknown,
    packager: unknown,
  ): FileMatcherLike
  getFileMatchers(
    config: unknown,
    name: string,
    destination: string,
    options: { macroExpander: (p: string) => string; customBuildOptions: unknown; globalOutDir: string; defaultSrc: string },
  ): FileMatcherLike[] | null
}
const fileMatcher = requireBuilder('app-builder-lib/out/fileMatcher') as FileMatcherModule
const { expandMacro } = requireBuilder('app-builder-lib/out/util/macroExpander') as {
  expandMacro(pattern: string, arch: string | null, appInfo: object, extra: Record<string, string>): string
}
const { getConfig, validateConfiguration } = requireBuilder('app-builder-lib/out/util/config/config') as {
  getConfig(projectDir: string, configPath: string): Promise<Configuration>
  validateConfiguration(config: Configuration, debugLogger: { isEnabled: boolean }): Promise<void>
}

const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
  name: string
  productName: string
  version: string
  scripts: Record<string, string>
  dependencies?: Record<string, string>
  optionalDependencies?: Record<string, string>
}
// The configuration exactly as electron-builder loads it (with its defaults merged in).
let config: Configuration
beforeAll(async () => {
  config = await getConfig(root, join(root, CONFIG_FILE))
})

type PlatformKey = 'linux' | 'win' | 'mac'
const PLATFORMS: { key: 'linux' | 'win'; os: 'linux' | 'win32'; foreign: string[] }[] = [
  { key: 'linux', os: 'linux', foreign: ['darwin', 'win32'] },
  { key: 'win', os: 'win32', foreign: ['darwin', 'linux'] },
]

/** The macro expansion electron-builder applies to file patterns (PlatformPackager.createGetFileMatchersOptions). */
function macroExpander(platform: PlatformKey, arch = 'x64'): (p: string) => string {
  const appInfo = { productName: pkg.productName, sanitizedProductName: pkg.productName, name: pkg.name, version: pkg.version }
  return (p) => expandMacro(p, arch, appInfo, { os: platform, '/*': '{,/**/*}' })
}

function platformOptions(platform: PlatformKey): object {
  return (config[platform] ?? {}) as object
}

/** What electron-builder needs from its packager to compute the file matchers. */
function fakePackager(): object {
  return {
    info: {
      projectDir: root,
      buildResourcesDir: join(root, config.directories?.buildResources ?? 'build'),
      config,
      isPrepackedAppAsar: false,
      debugLogger: { isEnabled: false },
    },
    config,
    debugLogger: { isEnabled: false },
  }
}

const outDir = () => join(root, config.directories?.output ?? 'dist')
const fileStat: StatLike = { isDirectory: () => false }
const abs = (rel: string) => join(root, ...rel.split('/'))

/** App files (everything outside node_modules): does `rel` get copied into the app? */
function appFileFilter(platform: PlatformKey): (rel: string) => boolean {
  const matchers = fileMatcher.getMainFileMatchers(
    root,
    join(outDir(), 'resources', 'app'),
    macroExpander(platform),
    platformOptions(platform),
    fakePackager(),
    outDir(),
    false,
  )
  // A second file set appears when e.g. `linux.files` holds only negations; electron-builder then
  // copies the whole project through it.
  expect(matchers, 'exactly one app file set').toHaveLength(1)
  const filter = matchers[0]!.createFilter()
  return (rel) => filter(abs(rel), fileStat)
}

/** Node-module files are matched on their path inside the app (node_modules/<pkg>/...). */
function moduleStat(rel: string): StatLike {
  return { isDirectory: () => false, moduleFullFilePath: rel.split('/').join(sep) }
}

function nodeModuleFilter(platform: PlatformKey, arch = 'x64'): (rel: string) => boolean {
  const matcher = fileMatcher.getNodeModuleFileMatcher(root, join(outDir(), 'resources', 'app'), macroExpander(platform, arch), platformOptions(platform), fakePackager())
  const filter = matcher.createFilter()
  const ignoredExts = fileMatcher.excludedExts.split(',').map((e) => `.${e}`)
  if (platform !== 'win') ignoredExts.push('.dll', '.exe') // appFileCopier.getNodeModuleExcludedExts
  const ignoredNames = new Set(fileMatcher.excludedNames.split(',').concat(['binding.gyp', 'node_gyp_bins']))
  return (rel) => {
    const base = posix.basename(rel)
    if (ignoredNames.has(base) || ignoredExts.some((e) => base.endsWith(e))) return false
    return filter(abs(rel), moduleStat(rel))
  }
}

/** Is `rel` (a path inside the app) unpacked from app.asar? */
function unpackFilter(platform: PlatformKey): (rel: string) => boolean {
  const matchers = fileMatcher.getFileMatchers(config, 'asarUnpack', join(outDir(), 'resources', 'app'), {
    macroExpander: macroExpander(platform),
    customBuildOptions: platformOptions(platform),
    globalOutDir: outDir(),
    defaultSrc: root,
  })
  expect(matchers, 'asarUnpack is empty').not.toBeNull()
  const filter = matchers![0]!.createFilter()
  return (rel) => filter(abs(rel), rel.startsWith('node_modules/') ? moduleStat(rel) : fileStat)
}

/**
 * Extra resources (files outside app.asar, under the installed app's resources folder): where
 * `rel`, a repository file, is copied to below `resourcesDir`, or null when it is not. As
 * electron-builder copies them (fileMatcher.copyFiles): each file set is a folder walk through
 * its filter (everything, when the set has no inclusive pattern).
 */
function extraResourcePlacer(platform: PlatformKey, resourcesDir: string): (rel: string) => string | null {
  const matchers = fileMatcher.getFileMatchers(config, 'extraResources', resourcesDir, {
    macroExpander: macroExpander(platform),
    customBuildOptions: platformOptions(platform),
    globalOutDir: outDir(),
    defaultSrc: root,
  })
  expect(matchers, 'extraResources is empty').not.toBeNull()
  const sets = matchers!.map((m) => {
    if (m.isEmpty() || m.containsOnlyIgnore()) m.prependPattern('**/*')
    return { from: m.from, to: m.to, filter: m.createFilter() }
  })
  const dirStat: StatLike = { isDirectory: () => true }
  return (rel) => {
    const file = abs(rel)
    for (const set of sets) {
      const inside = relative(set.from, file)
      if (!inside || inside.startsWith('..') || isAbsolute(inside)) continue
      // The walk descends only into folders the filter lets through.
      const parts = inside.split(sep)
      const foldersPass = parts.slice(0, -1).every((_, i) => set.filter(join(set.from, ...parts.slice(0, i + 1)), dirStat))
      if (foldersPass && set.filter(file, fileStat)) return join(set.to, inside)
    }
    return null
  }
}

// ---- production dependency tree ------------------------------------------------------------

interface InstalledPackage {
  name: string
  /** posix path from the project root, e.g. node_modules/@tensorflow/tfjs-core */
  rel: string
  dir: string
}

/**
 * Production packages as Node resolves them (dependencies + optionalDependencies, recursively;
 * absent optional packages skipped). Written by hand rather than spawning `npm ls`: a directory
 * walk is fast, needs no network or npm version, and follows the same lookup Electron uses.
 */
function productionPackages(): InstalledPackage[] {
  const seen = new Map<string, InstalledPackage>()
  const queue: { from: string; names: string[] }[] = [
    { from: root, names: Object.keys({ ...pkg.dependencies, ...pkg.optionalDependencies }) },
  ]
  while (queue.length > 0) {
    const { from, names } = queue.shift()!
    for (const name of names) {
      let dir: string | null = null
      for (let d = from; ; d = resolve(d, '..')) {
        const candidate = join(d, 'node_modules', ...name.split('/'))
        if (existsSync(join(candidate, 'package.json'))) {
          dir = candidate
          break
        }
        if (d === root || resolve(d, '..') === d) break
      }
      if (dir === null || seen.has(dir)) continue
      const rel = relative(root, dir).split(sep).join('/')
      seen.set(dir, { name, rel, dir })
      const meta = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as {
        dependencies?: Record<string, string>
        optionalDependencies?: Record<string, string>
      }
      queue.push({ from: dir, names: Object.keys({ ...meta.dependencies, ...meta.optionalDependencies }) })
    }
  }
  return [...seen.values()]
}

/** Files of one package (posix, relative to the project root), not descending into nested node_modules. */
function packageFiles(p: InstalledPackage): string[] {
  const files: string[] = []
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.name === 'node_modules') continue
      const full = join(dir, entry.name)
      if (entry.isDirectory()) walk(full)
      else if (entry.isFile() || entry.isSymbolicLink()) files.push(relative(root, full).split(sep).join('/'))
    }
  }
  walk(p.dir)
  return files
}

const production = productionPackages()
const filesByPackage = new Map(production.map((p) => [p, packageFiles(p)]))
/** Packages that load native code: a binding.gyp (compiled on install/rebuild) or shipped *.node addons. */
const nativePackages = production.filter(
  (p) => existsSync(join(p.dir, 'binding.gyp')) || filesByPackage.get(p)!.some((f) => f.endsWith('.node')),
)

// ---- image headers ---------------------------------------------------------------------------

function pngSize(file: string): { width: number; height: number } {
  const buf = readFileSync(file)
  expect(buf.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])), `${file} is not a PNG`).toBe(true)
  expect(buf.toString('latin1', 12, 16)).toBe('IHDR')
  return { width: buf.readUInt32BE(16), height: buf.readUInt32BE(20) }
}

/** Sizes listed in an .ico directory (a 0 byte means 256). */
function icoSizes(file: string): number[] {
  const buf = readFileSync(file)
  expect(buf.readUInt16LE(0), `${file}: reserved field`).toBe(0)
  expect(buf.readUInt16LE(2), `${file}: not an icon resource`).toBe(1)
  const count = buf.readUInt16LE(4)
  const sizes: number[] = []
  for (let i = 0; i < count; i++) {
    const entry = 6 + i * 16
    const width = buf[entry]! === 0 ? 256 : buf[entry]!
    const height = buf[entry + 1]! === 0 ? 256 : buf[entry + 1]!
    expect(height, `${file}: square entries`).toBe(width)
    const bytes = buf.readUInt32LE(entry + 8)
    const offset = buf.readUInt32LE(entry + 12)
    expect(offset + bytes, `${file}: entry ${i} inside the file`).toBeLessThanOrEqual(buf.length)
    sizes.push(width)
  }
  return sizes
}

/** A path as electron-builder resolves resources: build resources folder first, then the project. */
function resourcePath(p: string): string {
  const inBuild = join(root, config.directories?.buildResources ?? 'build', p)
  return existsSync(inBuild) ? inBuild : join(root, p)
}

// ---- tests -----------------------------------------------------------------------------------

describe('electron-builder configuration', () => {
  it('passes electron-builder’s own schema validation', async () => {
    await expect(validateConfiguration(config, { isEnabled: false })).resolves.toBeUndefined()
  })

  it('names the app: appId, productName (also the user-data folder name), output and resources folders', () => {
    expect(config.appId).toMatch(/^[a-z][a-z0-9]*(\.[a-z][a-z0-9-]*){2,}$/)
    expect(config.productName).toBe('FastBioNER Workbench')
    // Electron names the userData folder after package.json's productName; both must agree so
    // that installed builds and `npm start` share one workspace.
    expect(pkg.productName).toBe(config.productName)
    expect(config.directories?.output).toBe('dist')
    expect(config.directories?.buildResources).toBe('build')
    // electron-builder would otherwise package ./app or ./www instead of the project root.
    expect(existsSync(join(root, 'app')) || existsSync(join(root, 'www'))).toBe(false)
  })

  it('has npm scripts that build the installers with this file', () => {
    expect(pkg.scripts['dist:linux']).toMatch(/^electron-vite build && electron-builder --linux AppImage deb --x64 --config electron-builder\.config\.cjs$/)
    expect(pkg.scripts['dist:win']).toMatch(/^electron-vite build && electron-builder --win nsis --x64 --config electron-builder\.config\.cjs$/)
    expect(pkg.scripts['dist']).toMatch(/^electron-vite build && electron-builder .*--config electron-builder\.config\.cjs/)
  })

  it('ships the installed native modules as they are (no rebuild) and never publishes by itself', () => {
    // Every addon is N-API (next test), so nothing needs rebuilding for Electron's ABI.
    expect(config.npmRebuild).toBe(false)
    expect(config.buildDependenciesFromSource ?? false).toBe(false)
    expect(config.publish).toBeNull()
    // Optional native packages may be missing at build time: nothing may require their files.
    const copied = JSON.stringify([config.extraResources, config.extraFiles, config.win?.extraResources, config.linux?.extraResources])
    expect(copied).not.toMatch(/tfjs-node/)
  })
})

describe('release workflow', () => {
  const release = readFileSync(join(root, '.github/workflows/release.yml'), 'utf8')

  it('smoke-tests the unpacked app electron-builder produced, at the paths this configuration gives it, before uploading', () => {
    // electron-builder writes <output>/linux-unpacked/<executableName> and <output>/win-unpacked/<productName>.exe.
    const out = config.directories?.output ?? 'dist'
    const linuxExe = `${out}/linux-unpacked/${config.linux?.executableName ?? pkg.name}`
    const winExe = `${out}/win-unpacked/${config.productName ?? pkg.productName}.exe`
    expect(release).toContain(`unpacked: ${linuxExe}\n`)
    expect(release).toContain(`unpacked: ${winExe}\n`)
    const smoke = release.indexOf('npm run start:smoke -- --app "${{ matrix.unpacked }}"')
    expect(smoke).toBeGreaterThan(release.indexOf('npm run ${{ matrix.dist }}'))
    expect(smoke).toBeLessThan(release.indexOf('actions/upload-artifact'))
    expect(pkg.scripts['start:smoke']).toMatch(/scripts\/start-smoke\.ts/)
  })
})

describe('native modules', () => {
  /**
   * N-API addons export napi_register_module_v1 (or register through napi_module_register) and
   * load in any Node ABI, Electron's included; V8-API addons (better-sqlite3 before) export
   * node_register_module_v<ABI> and load only in the Node they were compiled for.
   */
  function addonKind(file: string): 'n-api' | 'v8' | 'unknown' {
    const bytes = readFileSync(file).toString('latin1')
    if (bytes.includes('node_register_module_v') || bytes.includes('node_module_register')) return 'v8'
    if (bytes.includes('napi_register_module_v1') || bytes.includes('napi_module_register')) return 'n-api'
    return 'unknown'
  }

  it('has only N-API addons in the production dependencies, so one install serves Node and Electron', () => {
    const addons = [...filesByPackage.values()].flat().filter((f) => f.endsWith('.node'))
    // The SQLite binding and onnxruntime must be among them, or the scan proves nothing.
    expect(addons.some((f) => f.startsWith('node_modules/@libsql/'))).toBe(true)
    expect(addons.some((f) => f.startsWith('node_modules/onnxruntime-node/'))).toBe(true)
    for (const f of addons) expect(addonKind(abs(f)), f).toBe('n-api')
    // Packages compiled on install (binding.gyp) must declare N-API builds (tfjs-node: napi_versions).
    for (const p of nativePackages.filter((x) => existsSync(join(x.dir, 'binding.gyp')))) {
      const meta = JSON.parse(readFileSync(join(p.dir, 'package.json'), 'utf8')) as { binary?: { napi_versions?: number[] } }
      expect(meta.binary?.napi_versions?.length, `${p.name} builds N-API binaries`).toBeGreaterThan(0)
    }
  })

  it('recognises a V8-API addon', () => {
    const { dir, file } = (() => {
      const d = mkdtempSync(join(tmpdir(), 'fastbioner-addon-'))
      const f = join(d, 'v8.node')
      writeFileSync(f, Buffer.from('\x7fELF....node_register_module_v145\0', 'latin1'))
      return { dir: d, file: f }
    })()
    try {
      expect(addonKind(file)).toBe('v8')
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})

describe('Windows target', () => {
  it('builds an NSIS x64 installer', () => {
    const targets = config.win?.target
    expect(Array.isArray(targets)).toBe(true)
    expect(targets).toEqual([{ target: 'nsis', arch: ['x64'] }])
  })

  it('installs per user with a start-menu entry, a desktop shortcut and an uninstaller', () => {
    const nsis = config.nsis!
    // Assisted installer, per-user by default and without elevation: no administrator needed.
    expect(nsis.oneClick).toBe(false)
    expect(nsis.perMachine).toBe(false)
    expect(nsis.selectPerMachineByDefault ?? false).toBe(false)
    expect(nsis.allowElevation).toBe(false)
    // electron-builder rejects a directory page on a one-click installer.
    expect(nsis.allowToChangeInstallationDirectory).toBe(true)
    expect(nsis.createStartMenuShortcut ?? true).toBe(true)
    expect(nsis.createDesktopShortcut ?? true).not.toBe(false)
    // NSIS targets always register an uninstaller (Apps & features); give it a readable name.
    expect(nsis.uninstallDisplayName).toMatch(/FastBioNER Workbench/)
    expect(existsSync(resourcePath(nsis.uninstallerIcon ?? config.win!.icon!))).toBe(true)
  })

  it('keeps user data when uninstalling', () => {
    // Only `Uninstall.exe --delete-app-data` removes %APPDATA%\FastBioNER Workbench.
    expect(config.nsis?.deleteAppDataOnUninstall).toBe(false)
  })
})

describe('Linux targets', () => {
  it('builds AppImage and deb for x64', () => {
    expect(config.linux?.target).toEqual([
      { target: 'AppImage', arch: ['x64'] },
      { target: 'deb', arch: ['x64'] },
    ])
  })

  it('has the desktop-entry and package metadata a .deb needs', () => {
    const linux = config.linux!
    expect(linux.category).toBe('Science')
    expect(linux.maintainer).toMatch(/^[^<>]+ <[^@\s<>]+@[^@\s<>]+>$/) // fpm: "Name <email>"
    expect(linux.executableName).toMatch(/^[a-z0-9-]+$/)
    expect(linux.desktop?.entry?.['Name']).toBe('FastBioNER Workbench')
    expect(linux.desktop?.entry?.['Exec']).toBeUndefined() // electron-builder refuses Exec here
    // Electron's Linux app_id is desktopName; it must name the .desktop file electron-builder writes.
    expect(linux.syncDesktopName).toBe(true)
    expect((config.extraMetadata as { desktopName?: string }).desktopName).toBe(`${linux.executableName}.desktop`)
  })

  it('removes no user data when the .deb is removed', () => {
    // Either no custom script (electron-builder's default is used) or one that leaves homes alone.
    const custom = config.deb?.afterRemove
    const script = custom
      ? readFileSync(resourcePath(custom), 'utf8')
      : readFileSync(requireBuilder.resolve('app-builder-lib/templates/linux/after-remove.tpl'), 'utf8')
    expect(script).not.toMatch(/\$HOME|~\/|\/home\b|\/root\b|\.config|XDG_|getent\s+passwd/)
    expect(script).not.toMatch(/FastBioNER Workbench|workspace\.sqlite/)
  })
})

describe('file association', () => {
  it('registers .pubtator as an editable document with its own icon', () => {
    const associations = [config.fileAssociations ?? []].flat()
    const pubtator = associations.find((a) => [a.ext].flat().includes('pubtator'))
    expect(pubtator).toBeDefined()
    expect(pubtator!.name).toBeTruthy()
    expect(pubtator!.description).toBeTruthy()
    expect(pubtator!.role).toBe('Editor')
    // Linux registers the association through the MIME type (desktop entry + shared-mime-info).
    expect(pubtator!.mimeType).toMatch(/^[a-z]+\/[a-z0-9.+-]+$/)
    // Windows: `icon` names build/<icon>.ico.
    const ico = resourcePath(`${pubtator!.icon}.ico`)
    expect(existsSync(ico), ico).toBe(true)
    expect(icoSizes(ico)).toEqual(expect.arrayContaining([16, 32, 48, 256]))
  })
})

describe('icons (one source: build/icon.svg)', () => {
  it('has the SVG sources and the generator script', () => {
    expect(readFileSync(join(root, 'build/icon.svg'), 'utf8')).toMatch(/<svg[\s>]/)
    expect(readFileSync(join(root, 'build/pubtator.svg'), 'utf8')).toMatch(/<svg[\s>]/)
    expect(existsSync(join(root, 'scripts/make-icons.mjs'))).toBe(true)
  })

  it('has a 512×512 build/icon.png', () => {
    expect(pngSize(join(root, 'build/icon.png'))).toEqual({ width: 512, height: 512 })
  })

  it('has a Linux icon set whose file names match their pixel sizes, 256 and 512 included', () => {
    const dir = resourcePath(config.linux!.icon!)
    expect(statSync(dir).isDirectory()).toBe(true)
    const names = readdirSync(dir).filter((n) => n.endsWith('.png'))
    const sizes = names.map((name) => {
      const m = /^(\d+)x(\d+)\.png$/.exec(name)
      expect(m, `unexpected icon name ${name}`).not.toBeNull()
      expect(pngSize(join(dir, name))).toEqual({ width: Number(m![1]), height: Number(m![2]) })
      return Number(m![1])
    })
    expect(sizes).toEqual(expect.arrayContaining([16, 32, 48, 64, 128, 256, 512]))
  })

  it('has a Windows .ico with a 256×256 entry (electron-builder requires it)', () => {
    const ico = resourcePath(config.win!.icon!)
    expect(ico.endsWith('.ico')).toBe(true)
    expect(icoSizes(ico)).toEqual(expect.arrayContaining([16, 24, 32, 48, 64, 256]))
  })
})

describe.each(PLATFORMS)('app contents ($key)', ({ key, os, foreign }) => {
  it('ships the electron-vite build and package.json, and nothing else from the repository', () => {
    const ships = appFileFilter(key)
    for (const rel of ['package.json', 'out/main/index.js', 'out/preload/index.js', 'out/renderer/index.html', 'out/renderer/assets/index-abc123.js']) {
      expect(ships(rel), rel).toBe(true)
    }
    for (const rel of [
      'src/main/index.ts',
      'src/core/store/schema.ts',
      'test/unit/packaging/config.test.ts',
      'test/fixtures/small.pubtator',
      'test/e2e/app.test.ts',
      'bench/import.ts',
      'scripts/make-icons.mjs',
      'docs/PACKAGING.md',
      'README.md',
      'CONTRIBUTING.md',
      'coverage/lcov.info',
      'test-results/electronegativity.csv',
      '.ci/run',
      '.github/workflows/release.yml',
      'bin/fastbioner.js',
      'build/icon.png',
      'dist/linux-unpacked/resources/app.asar',
      'tsconfig.json',
      'package-lock.json',
      'electron.vite.config.ts',
      'electron-builder.config.cjs',
      'out/main/index.js.map',
      'out/renderer/assets/index-abc123.js.map',
      'out/main/corpus.pubtator',
      'out/main/annotations.tsv',
      'shared/data/ncbi-disease/train.pubtator',
      'data/bc5cdr/test.tsv',
    ]) {
      expect(ships(rel), rel).toBe(false)
    }
  })

  it('selects no file of the actual repository outside out/ except package.json', () => {
    const ships = appFileFilter(key)
    const shipped: string[] = []
    const walk = (dir: string) => {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        const full = join(dir, entry.name)
        const rel = relative(root, full).split(sep).join('/')
        if (['node_modules', '.git', 'out', 'dist'].includes(rel)) continue
        if (entry.isDirectory()) walk(full)
        else if (ships(rel)) shipped.push(rel)
      }
    }
    walk(root)
    expect(shipped).toEqual(['package.json'])
  })

  it('ships the default model as plain files beside app.asar: resources/models/default → <resources>/models/default', () => {
    // Where core/model/default-model.ts looks in the packaged app: process.resourcesPath/models/default.
    const resources = join(outDir(), `${key}-unpacked`, 'resources')
    const place = extraResourcePlacer(key, resources)
    for (const name of ['config.json', 'vocab.txt', 'tokenizer_config.json', 'model.safetensors', 'fastbioner.json', 'MODEL_CARD.md']) {
      expect(place(`resources/models/default/${name}`), name).toBe(join(resources, 'models', 'default', name))
    }
    // A temp file of an interrupted write, other models and other repository files stay out.
    expect(place('resources/models/default/.fastbioner-tmp-123-lq2x9-model.onnx')).toBeNull()
    expect(place('resources/models/candidate/model.safetensors')).toBeNull()
    expect(place('src/main/index.ts')).toBeNull()
    expect(place('package.json')).toBeNull()
    // Not inside app.asar: the app's file set never selects the model (onnxruntime and the copy
    // into a workspace need real files).
    const ships = appFileFilter(key)
    expect(ships('resources/models/default/model.safetensors')).toBe(false)
    expect(ships('resources/models/default/config.json')).toBe(false)
  })

  it(`ships the target's native binaries and the wasm backend, not other OSes' binaries`, () => {
    const ships = nodeModuleFilter(key)
    expect(ships('node_modules/libsql/index.js')).toBe(true)
    expect(ships('node_modules/libsql/package.json')).toBe(true)
    const libsqlAddon = key === 'linux' ? '@libsql/linux-x64-gnu' : '@libsql/win32-x64-msvc'
    expect(ships(`node_modules/${libsqlAddon}/index.node`)).toBe(true)
    expect(ships(`node_modules/${libsqlAddon}/package.json`)).toBe(true)
    // Electron runs on glibc only.
    expect(ships('node_modules/@libsql/linux-x64-musl/index.node')).toBe(false)
    expect(ships(`node_modules/onnxruntime-node/bin/napi-v6/${os}/x64/onnxruntime_binding.node`)).toBe(true)
    expect(ships(`node_modules/onnxruntime-node/dist/binding.js`)).toBe(true)
    for (const other of foreign.filter((o) => o !== 'darwin')) {
      expect(ships(`node_modules/onnxruntime-node/bin/napi-v6/${other}/x64/onnxruntime_binding.node`), other).toBe(false)
    }
    // Every binary onnxruntime-node actually installed: only the target OS/arch ships.
    const ort = production.find((p) => p.name === 'onnxruntime-node')!
    const binaries = filesByPackage.get(ort)!.filter((f) => /\/bin\/napi-v\d+\/[^/]+\/[^/]+\/[^/]+$/.test(f))
    expect(binaries.length).toBeGreaterThan(0)
    for (const f of binaries) {
      const [binOs, binArch] = f.split('/').slice(-3, -1)
      expect(ships(f), f).toBe(binOs === os && binArch === 'x64')
    }
    if (key === 'linux') expect(ships('node_modules/onnxruntime-node/bin/napi-v6/linux/x64/libonnxruntime.so.1')).toBe(true)
    else expect(ships('node_modules/onnxruntime-node/bin/napi-v6/win32/x64/onnxruntime.dll')).toBe(true)

    const wasmPkg = production.find((p) => p.name === '@tensorflow/tfjs-backend-wasm')
    expect(wasmPkg, '@tensorflow/tfjs-backend-wasm is a production dependency').toBeDefined()
    const wasm = filesByPackage.get(wasmPkg!)!.filter((f) => /\/dist\/[^/]+\.wasm$/.test(f))
    expect(wasm.length).toBeGreaterThanOrEqual(3) // plain, simd, threaded-simd
    for (const f of wasm) expect(ships(f), f).toBe(true)
    const main = JSON.parse(readFileSync(join(wasmPkg!.dir, 'package.json'), 'utf8')).main as string
    expect(ships(posix.join(wasmPkg!.rel, main)), 'the wasm backend entry point').toBe(true)
  })

  it('unpacks every native module installed among the production dependencies', () => {
    const unpacked = unpackFilter(key)
    const ships = nodeModuleFilter(key)
    // The scan must find what we know is installed, or it proves nothing.
    expect(nativePackages.map((p) => p.name)).toEqual(expect.arrayContaining(['onnxruntime-node']))
    expect(nativePackages.some((p) => p.name.startsWith('@libsql/'))).toBe(true)
    expect(unpacked('node_modules/@libsql/win32-x64-msvc/index.node')).toBe(true)
    expect(unpacked('node_modules/@libsql/linux-x64-gnu/index.node')).toBe(true)
    for (const p of nativePackages) {
      // Whole package: addons dlopen sibling libraries (libonnxruntime.so.1, libtensorflow) that
      // have no .node extension, and a rebuild writes new addons under build/Release.
      for (const f of filesByPackage.get(p)!) {
        if (ships(f)) expect(unpacked(f), `${f} must be asar-unpacked`).toBe(true)
      }
      expect(unpacked(`${p.rel}/build/Release/addon.node`), `${p.name} rebuilt addon`).toBe(true)
    }
    // Any addon anywhere in the production tree, including packages added after this test.
    for (const files of filesByPackage.values()) {
      for (const f of files) if (f.endsWith('.node')) expect(unpacked(f), f).toBe(true)
    }
    expect(unpacked('node_modules/some-future-addon/build/Release/addon.node')).toBe(true)
    expect(unpacked('node_modules/@scope/addon/node_modules/dep/prebuilds/linux-x64/dep.node')).toBe(true)
  })

  it('unpacks the optional TensorFlow native packages even when they are absent here', () => {
    const unpacked = unpackFilter(key)
    for (const name of ['@tensorflow/tfjs-node', '@tensorflow/tfjs-node-gpu']) {
      expect(Object.keys(pkg.optionalDependencies ?? {})).toContain(name)
      expect(unpacked(`node_modules/${name}/lib/napi-v8/tfjs_binding.node`), name).toBe(true)
      expect(unpacked(`node_modules/${name}/deps/lib/libtensorflow.so.2`), name).toBe(true)
      expect(unpacked(`node_modules/${name}/deps/lib/tensorflow.dll`), name).toBe(true)
    }
  })

  it('unpacks the wasm binaries and tfjs (its gradient sources load as real files), keeps our JavaScript in app.asar', () => {
    const unpacked = unpackFilter(key)
    for (const name of ['tfjs-backend-wasm', 'tfjs-backend-wasm-simd', 'tfjs-backend-wasm-threaded-simd']) {
      expect(unpacked(`node_modules/@tensorflow/tfjs-backend-wasm/dist/${name}.wasm`), name).toBe(true)
    }
    expect(unpacked('node_modules/@tensorflow/tfjs-core/dist/register_all_gradients.js')).toBe(true)
    expect(unpacked('node_modules/@tensorflow/tfjs-core/dist/gradients/Abs_grad.js')).toBe(true)
    // Every package those ES-module sources import resolves to an unpacked copy too (the hook
    // thread resolves them from the unpacked folder).
    const core = production.find((p) => p.name === '@tensorflow/tfjs-core')!
    const bare = new Set<string>()
    for (const f of filesByPackage.get(core)!) {
      // The ES-module sources: not the CommonJS bundles (tf-core*.js) or the repo's dev scripts.
      if (!/\/dist\/.*\.js$/.test(f) || /\/dist\/(tf-core[^/]*\.js|scripts\/)/.test(f)) continue
      for (const m of readFileSync(abs(f), 'utf8').matchAll(/^(?:import|export)\b[^;]*?\bfrom '([^.'][^']*)'/gm)) bare.add(m[1]!)
    }
    expect([...bare]).toEqual(expect.arrayContaining(['long', 'seedrandom']))
    for (const name of bare) {
      if (['fs', 'path'].includes(name) || name.startsWith('node:')) continue // built-ins
      const dep = production.find((p) => p.name === name)
      expect(dep, `${name} (imported by tfjs-core's sources) is a production package`).toBeDefined()
      expect(unpacked(`${dep!.rel}/package.json`), `${name} must be asar-unpacked`).toBe(true)
    }
    expect(unpacked('node_modules/zod/package.json')).toBe(false)
    expect(unpacked('out/main/index.js')).toBe(false)
    expect(unpacked('package.json')).toBe(false)
  })
})

describe('onnxruntime binary pruning', () => {
  it('keeps the binaries of other targets built from the same configuration', () => {
    // The pruning patterns are macros; a mac or arm64 build must still get its own binaries.
    expect(nodeModuleFilter('mac', 'arm64')('node_modules/onnxruntime-node/bin/napi-v6/darwin/arm64/onnxruntime_binding.node')).toBe(true)
    expect(nodeModuleFilter('mac', 'arm64')('node_modules/onnxruntime-node/bin/napi-v6/linux/arm64/onnxruntime_binding.node')).toBe(false)
    expect(nodeModuleFilter('linux', 'arm64')('node_modules/onnxruntime-node/bin/napi-v6/linux/arm64/libonnxruntime.so.1')).toBe(true)
    expect(nodeModuleFilter('win', 'arm64')('node_modules/onnxruntime-node/bin/napi-v6/win32/arm64/onnxruntime.dll')).toBe(true)
  })
})

describe('production tree scan', () => {
  it('follows dependencies and skips devDependencies', () => {
    const names = new Set(production.map((p) => p.name))
    expect(names.has('libsql')).toBe(true)
    expect(names.has('@tensorflow/tfjs-backend-wasm')).toBe(true)
    expect(names.has('@neon-rs/load')).toBe(true) // transitive, via libsql
    expect(names.has('vitest')).toBe(false)
    expect(names.has('electron')).toBe(false)
    for (const p of production) expect(lstatSync(p.dir).isDirectory() || lstatSync(p.dir).isSymbolicLink()).toBe(true)
  })
})
