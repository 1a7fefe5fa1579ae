import type { Clock } from '../core/clock.js';
import type { AssetCatalogue } from '../assets/catalogue.js';
import { HIVE_OFFLINE_AFTER_MS, RequestStatus, type StatusSource } from './status.js';

/**
 * "Now" for reporting (relative `start`/`stop`, an omitted `stop`; docs/api.md): the
 * platform's present for an organisation, truncated to the minute (the store's unit).
 *
 * The API's own clock is the wall clock (tokens face real clients), but a simulated run's
 * platform lives in simulated time: a `--speed max` run's data ends at the scenario's end,
 * days away from the wall clock. So the present is read from the data, as device status is
 * (status.ts): the organisation's newest hive heartbeat. When that heartbeat is within three
 * heartbeat intervals of the API's clock, the hives are live on it (`occusim serve`) and the
 * clock itself is the present; when no hive was ever heard, the clock is too. For a finished
 * run the present is its last heartbeat: "the last 5 minutes" are the run's last 5 minutes.
 */
const MINUTE_MS = 60_000;

export function platformNow(
  assets: AssetCatalogue,
  clock: Clock,
  status: StatusSource | undefined,
): (orgId: string) => Promise<number> {
  return async (orgId) => {
    const beat = status ? await new RequestStatus(status, assets, orgId).presentMs() : null;
    const wall = clock.now();
    const now = beat === null || Math.abs(wall - beat) <= HIVE_OFFLINE_AFTER_MS ? wall : beat;
    return Math.floor(now / MINUTE_MS) * MINUTE_MS;
  };
}
