/**
 * What the world simulation offers the rest of the data path: where people are at the
 * current tick and which door lines they crossed during it. Sensors read this; they never
 * see agents' plans.
 */
export type Posture = 'walking' | 'standing' | 'sitting';

export interface PersonState {
  readonly id: string; // person_…
  readonly floorId: string;
  /** The room the person is in (null while in transit outside any room, which should not happen on a floor). */
  readonly roomId: string | null;
  readonly x: number;
  readonly y: number;
  readonly posture: Posture;
}

/** One person crossing one door line during a tick. */
export interface DoorCrossing {
  readonly personId: string;
  readonly doorId: string;
  /** Interpolated instant of the crossing, within (tick start, tick end]. */
  readonly atMs: number;
  /** 'in' = from the door's fromRoomId side into its toRoomId side. */
  readonly direction: 'in' | 'out';
  /** Where along the door segment the line was crossed, 0 (line[0]) … 1 (line[1]). */
  readonly along: number;
}

export interface WorldStep {
  readonly atMs: number;
  readonly crossings: readonly DoorCrossing[];
}

export interface World {
  /** Advances the world by one tick, to `atMs` (must be the previous instant + tickMs). */
  step(atMs: number): WorldStep;
  /** People on the floor at the current tick (those not yet arrived or gone home are absent). */
  peopleOnFloor(floorId: string): readonly PersonState[];
  /** Number of people on any floor at the current tick. */
  presentCount(): number;
}
