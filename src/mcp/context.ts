import type { Clock } from '../core/clock.js';
import type { TokenSource } from './auth.js';
import { CallScope } from './cache.js';
import { CatalogCache } from './catalog.js';
import type { HttpPort } from './http-port.js';
import { OccupancyReader } from './occupancy.js';
import { Platform, type Log } from './platform.js';
import type { McpSettings } from './settings.js';
import type { ToolContext } from './tool.js';

/** One organisation's tool context: a platform client and its caches (topology, occupancy). */
export function toolContext(settings: McpSettings, http: HttpPort, tokens: TokenSource, clock: Clock, log?: Log): ToolContext {
  const platform = new Platform(http, tokens, log);
  const scope = new CallScope();
  return {
    platform,
    scope,
    catalog: new CatalogCache(platform, clock, settings.topologyTtlMs, scope),
    occupancy: new OccupancyReader(platform, clock, settings.occupancyTtlMs, scope),
    settings,
    clock,
  };
}
