import type { AnyTool } from '../tool.js';
import { getAssetDetails } from './asset-details.js';
import { availableRooms } from './available-rooms.js';
import { spaceBusyness } from './busyness.js';
import { getCurrentOccupancy } from './current-occupancy.js';
import { fetchEntityDetails } from './entity-details.js';
import { hardwareSnapshot } from './hardware.js';
import { searchAssets } from './search-assets.js';
import { getOccupancyTimeseries } from './timeseries.js';
import { listTopology } from './topology.js';
import { trafficFlow } from './traffic-flow.js';

/** The ten tools of spec §1 ("Assistant tool server"), in its table's order. */
export const TOOLS: readonly AnyTool[] = [
  searchAssets,
  getAssetDetails,
  hardwareSnapshot,
  availableRooms,
  spaceBusyness,
  trafficFlow,
  listTopology,
  fetchEntityDetails,
  getOccupancyTimeseries,
  getCurrentOccupancy,
];
