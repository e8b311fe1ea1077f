#!/usr/bin/env node
// Runs the TypeScript CLI through tsx so `npx fastbioner` needs no separate build step.
'use strict'
const path = require('node:path')
const { register } = require('tsx/cjs/api')
// tsx 4 resolves the tsconfig's path aliases (@core/*, @shared/*) from the working directory
// unless TSX_TSCONFIG_PATH names the file: without it the CLI fails outside the repository root.
const tsconfig = path.join(__dirname, '..', 'tsconfig.json')
process.env.TSX_TSCONFIG_PATH = tsconfig
register({ tsconfig })
const { main } = require('../src/cli/index.ts')
main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code
  },
  (error) => {
    process.stderr.write(`fastbioner: ${error instanceof Error ? error.message : String(error)}\n`)
    process.exitCode = 1
  },
)
