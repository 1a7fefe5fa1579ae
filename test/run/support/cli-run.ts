/**
 * The CLI in a process of its own, from the sources, for the SIGKILL/resume test:
 * `node --import tsx cli-run.ts <occusim arguments…>`. Exits with the CLI's code.
 */
import { main } from '../../../src/cli/main.js';

process.exitCode = await main(process.argv.slice(2), { stdout: process.stdout, stderr: process.stderr });
