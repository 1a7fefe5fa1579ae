import type { ScenarioModel } from '../scenario/model.js';
import { createWorldWithProbe } from './engine.js';
import type { World } from './types.js';

/**
 * Creates the simulated world of a scenario: one agent per person of every population,
 * walking room to room through doors only (behaviour: docs/world-model.md).
 *
 * All randomness comes from `rngFor(model.seed, personId)`, one stream per person, so
 * adding a person never changes another person's path (meetings aside: they choose among
 * whoever is seated). The first call must be `step(model.startMs)`; each later call one
 * `tickMs` on. `peopleOnFloor` returns a reused array of records that stay valid until the
 * next `step`.
 *
 * @throws AppError SCENARIO_INVALID when a population's desks cannot be reached from its
 *   entrances, or a referenced room/door is not on the population's or meeting's floor.
 */
export function createWorld(model: ScenarioModel): World {
  return createWorldWithProbe(model, null);
}
