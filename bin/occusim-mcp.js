#!/usr/bin/env node
// Entry point installed as `occusim-mcp`: the read-only MCP tool server over stdio (docs/mcp.md).
// Runs the compiled server (built by `npm install` through the `prepare` script). Nothing but
// protocol messages may reach stdout.
import { runStdioServer } from '../dist/mcp/stdio.js';

try {
  await runStdioServer();
  process.exitCode = 0;
} catch (err) {
  process.stderr.write(`occusim-mcp: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = 1;
}
setTimeout(() => process.exit(process.exitCode ?? 0), 1000).unref();
