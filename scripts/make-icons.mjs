#!/usr/bin/env node
// Regenerates every packaging icon in build/ from the two SVG sources, so Windows and Linux
// icons never drift apart:
//   build/icon.svg     -> build/icon.png (512), build/icons/<n>x<n>.png (Linux set), build/icon.ico
//   build/pubtator.svg -> build/pubtator.ico (Windows icon of the .pubtator file association)
// The outputs are committed; run this only after editing an SVG:
//   node scripts/make-icons.mjs
// Needs Debian's rsvg-convert and ImageMagick (`apt-get install -y librsvg2-bin imagemagick`):
// no maintained SVG rasteriser / ICO writer is among the project's npm packages, and an ICO
// whose small sizes are BMP entries (what ImageMagick writes) is what NSIS and rcedit accept.
// Set IMAGEMAGICK=/path/to/convert-or-magick to choose the ImageMagick binary.
import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { delimiter, dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const buildDir = join(root, 'build')

/** Sizes of the Linux hicolor icon set; electron-builder reads them from the file names. */
const LINUX_SIZES = [16, 24, 32, 48, 64, 128, 256, 512]
/** Sizes inside the .ico files; 256 is required by electron-builder for Windows. */
const ICO_SIZES = [16, 24, 32, 48, 64, 128, 256]

function run(cmd, args) {
  return execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })
}

function isImageMagick(cmd) {
  try {
    return /^Version: ImageMagick/m.test(run(cmd, ['-version']))
  } catch {
    return false
  }
}

/** First real ImageMagick on PATH; a `convert` that is not ImageMagick (stand-ins exist) is skipped. */
function findImageMagick() {
  if (process.env.IMAGEMAGICK) {
    if (isImageMagick(process.env.IMAGEMAGICK)) return process.env.IMAGEMAGICK
    throw new Error(`IMAGEMAGICK=${process.env.IMAGEMAGICK} is not an ImageMagick binary`)
  }
  const dirs = (process.env.PATH ?? '').split(delimiter).filter(Boolean)
  for (const name of ['magick', 'convert']) {
    for (const dir of dirs) {
      const candidate = join(dir, name)
      if (existsSync(candidate) && isImageMagick(candidate)) return candidate
    }
  }
  throw new Error('ImageMagick not found: apt-get install -y imagemagick (or set IMAGEMAGICK)')
}

function requireRsvg() {
  try {
    run('rsvg-convert', ['--version'])
  } catch {
    throw new Error('rsvg-convert not found: apt-get install -y librsvg2-bin')
  }
}

function rasterise(svg, size, out) {
  run('rsvg-convert', ['--width', String(size), '--height', String(size), '--keep-aspect-ratio', svg, '--output', out])
}

/** Re-encodes a PNG without metadata chunks so regenerated files are byte-stable. */
function stripPng(magick, file) {
  run(magick, [file, '-strip', '-define', 'png:exclude-chunks=date,time', `PNG32:${file}`])
}

function writeIco(magick, svg, out, tmp) {
  // Rasterise each size from the vector source (sharper than downscaling one bitmap).
  const frames = ICO_SIZES.map((size) => {
    const png = join(tmp, `${size}.png`)
    rasterise(svg, size, png)
    return png
  })
  run(magick, [...frames, '-strip', out])
}

function main() {
  requireRsvg()
  const magick = findImageMagick()
  const appSvg = join(buildDir, 'icon.svg')
  const docSvg = join(buildDir, 'pubtator.svg')
  const setDir = join(buildDir, 'icons')
  mkdirSync(setDir, { recursive: true })
  const tmp = mkdtempSync(join(tmpdir(), 'fastbioner-icons-'))
  try {
    rasterise(appSvg, 512, join(buildDir, 'icon.png'))
    stripPng(magick, join(buildDir, 'icon.png'))
    for (const size of LINUX_SIZES) {
      const file = join(setDir, `${size}x${size}.png`)
      rasterise(appSvg, size, file)
      stripPng(magick, file)
    }
    writeIco(magick, appSvg, join(buildDir, 'icon.ico'), mkdtempSync(join(tmp, 'app-')))
    writeIco(magick, docSvg, join(buildDir, 'pubtator.ico'), mkdtempSync(join(tmp, 'doc-')))
  } finally {
    rmSync(tmp, { recursive: true, force: true })
  }
  process.stdout.write(
    `icons written to ${buildDir}: icon.png, icons/{${LINUX_SIZES.map((s) => `${s}x${s}`).join(',')}}.png, icon.ico, pubtator.ico\n`,
  )
}

main()
