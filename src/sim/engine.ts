import { AppError, ErrorCodes } from '../core/errors.js';
import { rngFor } from '../core/rng.js';
import { stableId } from '../core/ids.js';
import type { Vec2 } from '../core/geometry.js';
import type { PopulationModel, ScenarioModel } from '../scenario/model.js';
import { Agent, type AgentContext, type MoveProbe, type PersonRecord } from './agent.js';
import { buildFloorPlan, type FloorPlan, type RoomGeo } from './floorplan.js';
import { createMeetingRunner, type MeetingRunner } from './meetings.js';
import type { DoorCrossing, World, WorldStep } from './types.js';

/**
 * The world loop behind `createWorld`, with an optional movement probe for tests. Each tick:
 * everyone walking moves over (t − tick, t] and reports door crossings; then meetings that
 * are due convene; then each person applies what is due at t (so anything that starts at t
 * moves from the next tick on).
 */
export function createWorldWithProbe(model: ScenarioModel, probe: MoveProbe | null): World {
  const plans = new Map(model.floors.map((f) => [f.id, buildFloorPlan(model, f)]));
  const agents: Agent[] = [];
  const byFloor = new Map<string, Agent[]>();
  // Desks taken so far on each floor, in creation order: desks are never closer than DESK_SPACING_M.
  const desks = new Map<string, Vec2[]>(model.floors.map((f) => [f.id, []]));
  for (const pop of model.populations) {
    const ctx = agentContext(model, pop, plans, probe, desks.get(pop.floorId) ?? []);
    const list = byFloor.get(pop.floorId) ?? [];
    byFloor.set(pop.floorId, list);
    for (let i = 0; i < pop.count; i++) {
      const id = stableId('person', pop.id, String(i));
      const agent = new Agent(id, ctx, rngFor(model.seed, id), rngFor(model.seed, `${id}:desk`));
      agents.push(agent);
      list.push(agent);
    }
  }
  let meetings: MeetingRunner[] = [];
  let lastMs: number | null = null;
  let stepNo = 0;
  const views = new Map<string, { stepNo: number; people: PersonRecord[] }>();

  const meetingRooms = model.meetings.map((m) => {
    const plan = plans.get(m.floorId);
    if (!plan) throw new AppError(ErrorCodes.SCENARIO_INVALID, `${m.src}: floor ${m.floorId} does not exist`);
    return roomOrThrow(plan, m.roomId, m.src);
  });

  function begin(t: number): void {
    for (const a of agents) a.start(t);
    meetings = model.meetings.map((m, i) =>
      createMeetingRunner(m, meetingRooms[i] as RoomGeo, zoneOf(model, m.floorId), byFloor.get(m.floorId) ?? [], t),
    );
  }

  return {
    step(atMs: number): WorldStep {
      const crossings: DoorCrossing[] = [];
      if (lastMs === null) begin(atMs);
      else if (atMs !== lastMs + model.tickMs) {
        throw new RangeError(
          `world.step(${atMs}): expected ${lastMs + model.tickMs} (one tick of ${model.tickMs} ms later)`,
        );
      } else {
        const t0 = lastMs;
        const sink = (c: DoorCrossing): void => void crossings.push(c);
        for (const a of agents) a.move(t0, model.tickMs, sink);
      }
      for (const m of meetings) m.tick(atMs);
      for (const a of agents) a.act(atMs);
      lastMs = atMs;
      stepNo++;
      crossings.sort((a, b) => a.atMs - b.atMs || (a.personId < b.personId ? -1 : a.personId > b.personId ? 1 : 0));
      return { atMs, crossings };
    },
    peopleOnFloor(floorId) {
      let view = views.get(floorId);
      if (!view) views.set(floorId, (view = { stepNo: -1, people: [] }));
      if (view.stepNo !== stepNo) {
        // Rewritten in place: emptying it (`length = 0`) gave its backing store back and the
        // pushes grew a new one, per floor and tick (bench/README.md, "scale-main"). Only a
        // floor whose people came or went changes length.
        const people = view.people;
        let n = 0;
        for (const a of byFloor.get(floorId) ?? NO_AGENTS) {
          if (a.person.roomId === null) continue;
          if (n < people.length) people[n] = a.person;
          else people.push(a.person);
          n++;
        }
        if (people.length !== n) people.length = n;
        view.stepNo = stepNo;
      }
      return view.people;
    },
    presentCount() {
      let n = 0;
      for (const a of agents) if (a.person.roomId !== null) n++;
      return n;
    },
  };
}

const NO_AGENTS: readonly Agent[] = [];

const siteZones = new WeakMap<ScenarioModel, ReadonlyMap<string, string>>();

/** The time zone of a floor's site (a floor → zone table built once per model: looking floors and sites up per population grew with floors²). */
function zoneOf(model: ScenarioModel, floorId: string): string {
  let zones = siteZones.get(model);
  if (!zones) {
    const bySite = new Map(model.sites.map((s) => [s.id, s.timezone] as const));
    const table = new Map<string, string>();
    for (const f of model.floors) {
      const zone = bySite.get(f.siteId);
      if (zone !== undefined && !table.has(f.id)) table.set(f.id, zone);
    }
    siteZones.set(model, (zones = table));
  }
  const zone = zones.get(floorId);
  if (zone === undefined)
    throw new AppError(ErrorCodes.SCENARIO_INVALID, `floor ${floorId} has no site with a time zone`);
  return zone;
}

function roomOrThrow(plan: FloorPlan, roomId: string, src: string): RoomGeo {
  const room = plan.rooms.get(roomId);
  if (!room) throw new AppError(ErrorCodes.SCENARIO_INVALID, `${src}: room ${roomId} is not on floor ${plan.floorId}`);
  return room;
}

/** Resolves a population against its floor and checks that its desks can be reached. */
function agentContext(
  model: ScenarioModel,
  pop: PopulationModel,
  plans: Map<string, FloorPlan>,
  probe: MoveProbe | null,
  takenDesks: Vec2[],
): AgentContext {
  const plan = plans.get(pop.floorId);
  if (!plan) throw new AppError(ErrorCodes.SCENARIO_INVALID, `${pop.src}: floor ${pop.floorId} does not exist`);
  const homeRooms = pop.homeRoomIds.map((id) => roomOrThrow(plan, id, pop.src));
  const entrances = pop.entranceDoorIds.map((id) => {
    const door = plan.doorsById.get(id);
    if (!door || door.fromRoomId !== null) {
      throw new AppError(
        ErrorCodes.SCENARIO_INVALID,
        `${pop.src}: door ${id} is not an entrance (from outside) of floor ${plan.floorId}`,
      );
    }
    return door;
  });
  if (homeRooms.length === 0 || entrances.length === 0) {
    throw new AppError(
      ErrorCodes.SCENARIO_INVALID,
      `${pop.src}: a population needs at least one home room and one entrance`,
    );
  }
  const reachable = reachableRooms(
    plan,
    entrances.map((d) => d.toRoomId),
  );
  for (const r of homeRooms) {
    if (!reachable.has(r.id))
      throw new AppError(
        ErrorCodes.SCENARIO_INVALID,
        `${pop.src}: home room ${r.id} cannot be reached from the entrances`,
      );
  }
  const activities = pop.activities
    .map((a) => ({
      rooms: a.roomIds
        .map((id) => plan.rooms.get(id))
        .filter((r): r is RoomGeo => r !== undefined && reachable.has(r.id)),
      rate: a.everyMs > 0 ? 1 / a.everyMs : 0,
      dwellMs: a.dwellMs,
    }))
    .filter((a) => a.rooms.length > 0 && a.rate > 0);
  return {
    plan,
    pop,
    zone: zoneOf(model, plan.floorId),
    tickMs: model.tickMs,
    homeRooms,
    entrances,
    activities,
    probe,
    takenDesks,
  };
}

/** Rooms connected to the start rooms through internal doors. */
function reachableRooms(plan: FloorPlan, start: readonly string[]): Set<string> {
  const seen = new Set(start);
  const queue = [...start];
  for (let r = queue.pop(); r !== undefined; r = queue.pop()) {
    for (const d of plan.rooms.get(r)?.doors ?? []) {
      const next = d.toRoomId === r ? d.fromRoomId : d.toRoomId;
      if (next !== null && !seen.has(next)) {
        seen.add(next);
        queue.push(next);
      }
    }
  }
  return seen;
}
