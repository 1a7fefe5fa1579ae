#!/usr/bin/env node
// Entry point installed as `occusim`. Runs the compiled CLI (built by `npm install` through
// the `prepare` script).
import { main } from '../dist/cli/main.js';
import { exitOnClosedStdout } from '../dist/cli/errors.js';

// `occusim schema | head`: a closed stdout is one line and exit 2, not an uncaught EPIPE.
exitOnClosedStdout(process.stdout, process.stderr, (code) => process.exit(code));
const code = await main(process.argv.slice(2), { stdout: process.stdout, stderr: process.stderr });
process.exitCode = code;
// Everything is closed by now; if a stray handle still holds the loop, do not hang the shell.
setTimeout(() => process.exit(code), 2000).unref();
