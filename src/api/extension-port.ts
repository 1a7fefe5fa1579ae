/**
 * What a part served on the API's port (the MCP tool server, mcp/http-plugin.ts) may use of
 * the API: how to plug in, how a request is authenticated, which Host names are allowed. The
 * rest of api/ is not its business, and test/layering.test.ts holds it to this file.
 */
export type { ApiExtension } from './app.js';
export { authenticate } from './auth/guard.js';
export type { TokenService } from './auth/tokens.js';
export { LOOPBACK_ONLY, type HostPolicy } from './host-guard.js';
