// electron-builder configuration for FastBioNER Workbench installers.
//   npm run dist:linux   AppImage + .deb (x64)
//   npm run dist:win     NSIS installer (x64)
// test/unit/packaging/config.test.ts checks this file with electron-builder's own schema and
// file matchers; docs/PACKAGING.md explains the choices.
'use strict'

// Every package that loads native code at run time. Whole packages are unpacked, not only their
// *.node files: the addons dlopen sibling libraries without that extension
// (onnxruntime-node: libonnxruntime.so.1 / onnxruntime.dll; tfjs-node: deps/lib/libtensorflow*).
// The tfjs-node packages are optional dependencies and may be absent; a glob that matches
// nothing is harmless. libsql's addon is in its per-platform package (@libsql/linux-x64-gnu,
// @libsql/win32-x64-msvc, …); libsql itself is JavaScript.
// All of them are N-API addons (test/unit/packaging/config.test.ts checks every *.node file):
// the binaries npm installed load in Electron as they are.
const NATIVE_PACKAGES = [
  '@libsql/*',
  'onnxruntime-node',
  '@tensorflow/tfjs-node',
  '@tensorflow/tfjs-node-gpu',
]

// Repository folders that must never reach the app, even if a later `files` entry widens the
// selection. Patterns are relative to the project root.
const NEVER_SHIPPED_DIRS = [
  'src',
  'test',
  'bench',
  'scripts',
  'docs',
  'bin',
  'coverage',
  'test-results',
  '.ci',
  '.github',
  '.vite',
  'shared',
  'data',
  'corpora',
]

// In GitHub Actions the repository page is the homepage the .deb metadata requires; elsewhere
// electron-builder falls back to the git remote.
const homepage =
  process.env.GITHUB_SERVER_URL && process.env.GITHUB_REPOSITORY
    ? `${process.env.GITHUB_SERVER_URL}/${process.env.GITHUB_REPOSITORY}`
    : undefined

/** @type {import('electron-builder').Configuration} */
const config = {
  appId: 'org.fastbioner.workbench',
  productName: 'FastBioNER Workbench',
  copyright: 'Copyright © ${author}',
  directories: {
    output: 'dist',
    buildResources: 'build',
  },
  extraMetadata: {
    // Electron uses desktopName as the Linux app_id / WM_CLASS; it must match the .desktop file.
    desktopName: 'fastbioner.desktop',
    ...(homepage ? { homepage } : {}),
  },

  // Allow-list: the electron-vite build and package.json; electron-builder adds the production
  // node_modules itself (devDependencies never ship). The negations also apply inside
  // node_modules.
  files: [
    'out/**/*',
    'package.json',
    `!{${NEVER_SHIPPED_DIRS.join(',')}}{,/**/*}`,
    '!**/*.map',
    '!**/*.{ts,mts,cts,tsx}',
    // Corpora and annotation data are user data, never part of the app.
    '!**/*.{pubtator,tsv,conll,iob,iob2,ann,sqlite,sqlite-journal,sqlite-wal,sqlite-shm}',
    '!**/{test,tests,__tests__,coverage}{,/**/*}',
    '!**/{README,CHANGELOG,HISTORY,CONTRIBUTING}{,.md,.markdown,.txt}',
    // onnxruntime-node ships binaries for every OS and architecture (~290 MB); keep the target's.
    // ${os} is linux | win | mac and ${arch} x64 | arm64, expanded per build. darwin stays out of
    // the OS rule so a mac build keeps its binaries; on x64 builds the arch rule drops them.
    // (Per-platform `linux.files` / `win.files` cannot hold these: electron-builder would treat a
    // negation-only list as a second "copy everything" file set.)
    '!node_modules/onnxruntime-node/bin/napi-v*/!(${os}*|darwin){,/**/*}',
    '!node_modules/onnxruntime-node/bin/napi-v*/*/!(${arch}){,/**/*}',
    // npm installs libsql's musl build beside the glibc one on Linux; Electron runs on glibc only.
    '!node_modules/@libsql/*-musl*{,/**/*}',
  ],

  // The default model (src/core/model/default-model.ts finds it at
  // process.resourcesPath/models/default): beside app.asar, as plain files, because every
  // workspace without a model gets a copy of the folder (its ONNX graph is exported from the
  // weights into the user's cache, core/onnx/graph-cache). Temp files of an interrupted write
  // (core/fs/atomic.ts: .fastbioner-tmp-*) stay out.
  extraResources: [{ from: 'resources/models/default', to: 'models/default', filter: ['**/*', '!**/.fastbioner-tmp-*'] }],

  asar: true,
  // Paths inside the app; the packaged files land in resources/app.asar.unpacked/… and Electron's
  // asar support redirects reads and process.dlopen() of these paths there.
  asarUnpack: [
    '**/*.node',
    ...NATIVE_PACKAGES.map((name) => `node_modules/${name}/**/*`),
    // The WebAssembly backend's binaries: fs reads work either way, but a worker, fetch() or a
    // native reader needs a real file on disk.
    '**/*.wasm',
    // tfjs-core's gradient sources are ES modules loaded at run time through a module.register
    // resolve hook (src/core/model/gradients.ts), which runs on Node's hooks thread and reads
    // real files, not asar entries; so are the packages those sources import.
    'node_modules/@tensorflow/**/*',
    'node_modules/{long,seedrandom}/**/*',
  ],

  // No rebuild: every native module is N-API (ABI-stable), so the binaries `npm ci` installed and
  // the tests ran are the ones that ship. A rebuild would only add network access (prebuilt
  // downloads, Electron headers) and, for tfjs-node's binding.gyp, a compile from source.
  npmRebuild: false,
  buildDependenciesFromSource: false,
  nodeGypRebuild: false,

  fileAssociations: [
    {
      ext: 'pubtator',
      name: 'PubTator document',
      description: 'PubTator annotated abstracts',
      mimeType: 'text/x-pubtator',
      role: 'Editor',
      // build/pubtator.ico on Windows (Linux uses the MIME type's icon).
      icon: 'pubtator',
    },
  ],

  // Installers are uploaded by the release workflow; the builder itself never publishes.
  publish: null,

  win: {
    target: [{ target: 'nsis', arch: ['x64'] }],
    icon: 'build/icon.ico',
  },
  nsis: {
    artifactName: 'FastBioNER-Workbench-Setup-${version}-${arch}.${ext}',
    // Assisted installer that installs for the current user without administrator rights
    // (%LOCALAPPDATA%\Programs\...). An administrator may still pick "all users".
    oneClick: false,
    perMachine: false,
    selectPerMachineByDefault: false,
    allowElevation: false,
    allowToChangeInstallationDirectory: true,
    createStartMenuShortcut: true,
    createDesktopShortcut: true,
    shortcutName: 'FastBioNER Workbench',
    uninstallDisplayName: 'FastBioNER Workbench ${version}',
    installerIcon: 'build/icon.ico',
    uninstallerIcon: 'build/icon.ico',
    runAfterFinish: true,
    // The workspace and models in %APPDATA%\FastBioNER Workbench survive uninstalling; the
    // uninstaller removes them only when run with --delete-app-data.
    deleteAppDataOnUninstall: false,
  },

  linux: {
    target: [
      { target: 'AppImage', arch: ['x64'] },
      { target: 'deb', arch: ['x64'] },
    ],
    icon: 'build/icons',
    category: 'Science',
    executableName: 'fastbioner',
    syncDesktopName: true,
    maintainer: 'FastBioNER team <fastbioner@example.org>',
    vendor: 'FastBioNER team',
    synopsis: 'Offline biomedical named-entity recognition workbench',
    description:
      'Import PubMed abstracts, annotate disease, chemical and gene mentions with a local transformer NER model, retrain and distil it. Works fully offline.',
    desktop: {
      entry: {
        Name: 'FastBioNER Workbench',
        GenericName: 'Biomedical NER Workbench',
        Comment: 'Annotate biomedical text with a local NER model',
        Keywords: 'NER;biomedical;PubMed;annotation;PubTator;',
        StartupNotify: 'true',
      },
    },
  },
  appImage: {
    artifactName: 'FastBioNER-Workbench-${version}-${arch}.${ext}',
  },
  deb: {
    artifactName: 'fastbioner_${version}_${arch}.${ext}',
    packageName: 'fastbioner',
    packageCategory: 'science',
    priority: 'optional',
    // No afterRemove override: electron-builder's default post-remove script only removes the
    // /usr/bin link and the AppArmor profile; it never touches users' home folders.
  },
}

module.exports = config
