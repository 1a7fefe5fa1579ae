import type { Clock } from '../core/clock.js';
import type { TokenSource } from './auth.js';
import { CallScope } from './cache.js';
import { CatalogCache } from './catalog.js';
import { EventLog } from './events.js';
import type { HttpPort } from './http-port.js';
import { OccupancyReader } from './occupancy.js';
import { Platform } from './platform.js';
import type { McpSettings } from './settings.js';
import type { ToolContext } from './tool.js';
import { Watcher } from './watch.js';

/**
 * One organisation's tool context: a platform client, its caches (topology, occupancy) and
 * the event log its sessions forward to their clients (events.ts). The token source logs to
 * the same log when it was built with it.
 */
export function toolContext(
  settings: McpSettings,
  http: HttpPort,
  tokens: TokenSource,
  clock: Clock,
  events: EventLog = new EventLog(),
): ToolContext {
  const platform = new Platform(http, tokens, events);
  const scope = new CallScope();
  const catalog = new CatalogCache(platform, clock, settings.topologyTtlMs, scope, events);
  return {
    platform,
    scope,
    catalog,
    watch: new Watcher(platform, catalog, clock, events),
    occupancy: new OccupancyReader(platform, clock, settings.occupancyTtlMs, scope),
    settings,
    clock,
    events,
  };
}
