import type { Vec2 } from '../core/geometry.js';
import type { Rng } from '../core/rng.js';
import type { PopulationModel } from '../scenario/model.js';
import type { DoorGeo, FloorPlan, RoomGeo } from './floorplan.js';
import { planPath, type Endpoint, type PlannedPath } from './route.js';
import { drawDayPlan, firstPlanDay, nextDay, type DayPlan } from './schedule.js';
import { randomSpot } from './spots.js';
import type { DoorCrossing, Posture } from './types.js';

/**
 * One person: a small state machine (absent → walking → at desk ⇄ trips / meetings → walking
 * out → absent, every local day) that moves along planned paths at a fixed speed. Every draw
 * comes from the person's own stream, so other people never change this person's day unless
 * they interact (meetings pick among whoever is seated).
 */
export interface ActivityPlan {
  readonly rooms: readonly RoomGeo[];
  /** Trips per ms (1 / everyMs). */
  readonly rate: number;
  readonly dwellMs: number;
}

/** Everything a person of one population needs to know about its floor. */
export interface AgentContext {
  readonly plan: FloorPlan;
  readonly pop: PopulationModel;
  readonly zone: string;
  readonly tickMs: number;
  readonly homeRooms: readonly RoomGeo[];
  readonly entrances: readonly DoorGeo[];
  readonly activities: readonly ActivityPlan[];
  /** Observes every straight piece of movement (tests use it to prove no wall is crossed). */
  readonly probe: MoveProbe | null;
  /** Desks already taken on the floor (shared, appended to as agents are created). */
  readonly takenDesks: Vec2[];
}

/** Desks are at least this far apart: two people closer than a blob would merge for a sensor. */
export const DESK_SPACING_M = 1.0;

export type MoveProbe = (personId: string, x0: number, y0: number, x1: number, y1: number) => void;

/** The mutable record behind the `PersonState` the world hands out. */
export interface PersonRecord {
  readonly id: string;
  readonly floorId: string;
  roomId: string | null;
  x: number;
  y: number;
  posture: Posture;
}

type Phase = 'absent' | 'walking' | 'desk' | 'activity' | 'meeting';
type Goal = 'desk' | 'activity' | 'meeting' | 'exit';

export class Agent {
  readonly person: PersonRecord;
  readonly #ctx: AgentContext;
  readonly #rng: Rng;
  /** Metres per millisecond. */
  readonly #speed: number;
  readonly #deskRoom: string;
  readonly #desk: Vec2;
  #day: DayPlan | null = null;
  #phase: Phase = 'absent';
  #goal: Goal = 'desk';
  /** Nothing changes before this instant unless moved or asked to a meeting. */
  #wakeMs = Infinity;
  #path: PlannedPath | null = null;
  #dist = 0;
  #leg = 0;
  #cross = 0;
  #untilMs = 0;
  #dwellMs = 0;
  #nextTripMs = Infinity;

  constructor(id: string, ctx: AgentContext, rng: Rng, deskRng: Rng) {
    this.#ctx = ctx;
    this.#rng = rng;
    this.#speed = rng.uniform(1.2, 1.4) / 1000;
    const home = rng.pick(ctx.homeRooms);
    this.#deskRoom = home.id;
    // A stream of its own: how many tries finding a free desk takes must not shift the person's other draws.
    this.#desk = randomSpot(home, deskRng, ctx.takenDesks, DESK_SPACING_M);
    ctx.takenDesks.push(this.#desk);
    this.person = {
      id,
      floorId: ctx.plan.floorId,
      roomId: null,
      x: this.#desk[0],
      y: this.#desk[1],
      posture: 'sitting',
    };
  }

  /** The day's draw that orders meeting invitations (see meetings.ts). */
  get meetingKey(): number {
    return this.#day?.meetingKey ?? 1;
  }

  /** Places the person at the first instant: seated if the day's arrival already passed. */
  start(t: number): void {
    // A night shift that started yesterday evening may still be inside at the first instant.
    this.#planDayFrom(firstPlanDay(this.#ctx.pop, t, this.#ctx.zone), t);
    const day = this.#day as DayPlan;
    if (day.arriveMs > t) return;
    this.person.roomId = this.#deskRoom;
    [this.person.x, this.person.y] = this.#desk;
    this.#sitAtDesk(t);
  }

  /** True when seated at the desk and not due to leave: the people a meeting may take. */
  isSeated(t: number): boolean {
    return this.#phase === 'desk' && (this.#day?.leaveMs ?? 0) > t;
  }

  /** Sends a seated person to a distinct spot in the meeting room until `untilMs`. */
  joinMeeting(room: RoomGeo, taken: Vec2[], untilMs: number): boolean {
    const spot = randomSpot(room, this.#rng, taken, 0.8);
    if (!this.#walkTo({ kind: 'inside', roomId: room.id, at: spot }, 'meeting')) return false;
    taken.push(spot);
    this.#untilMs = untilMs;
    return true;
  }

  /** Moves along the current path over the tick (t0, t0 + dtMs], reporting door crossings. */
  move(t0: number, dtMs: number, sink: (c: DoorCrossing) => void): void {
    const path = this.#path;
    if (this.#phase !== 'walking' || !path) return;
    const from = this.#dist;
    const to = Math.min(path.total, from + this.#speed * dtMs);
    this.#emitCrossings(path, from, to, t0, dtMs, sink);
    this.#advance(path, to);
    if (to >= path.total) this.#wakeMs = -Infinity;
  }

  /** Applies whatever is due at instant t (arrivals, trips, returns, departures). */
  act(t: number): void {
    if (t < this.#wakeMs) return;
    const day = this.#day as DayPlan;
    switch (this.#phase) {
      case 'absent':
        this.#walkTo({ kind: 'inside', roomId: this.#deskRoom, at: this.#desk }, 'desk', this.#pickEntrance());
        return;
      case 'walking':
        this.#arrive(t);
        return;
      case 'desk':
        if (t >= day.leaveMs) this.#leave();
        else this.#startTrip(t);
        return;
      case 'activity':
      case 'meeting':
        if (t >= day.leaveMs) this.#leave();
        else this.#walkTo({ kind: 'inside', roomId: this.#deskRoom, at: this.#desk }, 'desk');
        return;
    }
  }

  #emitCrossings(
    path: PlannedPath,
    from: number,
    to: number,
    t0: number,
    dtMs: number,
    sink: (c: DoorCrossing) => void,
  ): void {
    for (let c = path.crossings[this.#cross]; c && c.dist <= to; c = path.crossings[++this.#cross]) {
      // Whole milliseconds, rounded up so the instant stays within (t0, t0 + dtMs].
      const atMs = Math.min(t0 + dtMs, Math.max(t0 + 1, Math.ceil(t0 + (c.dist - from) / this.#speed)));
      sink({ personId: this.person.id, doorId: c.doorId, atMs, direction: c.direction, along: c.along });
      this.person.roomId = c.intoRoomId;
    }
  }

  #advance(path: PlannedPath, to: number): void {
    const { xs, ys, cum } = path;
    const last = xs.length - 1;
    const probe = this.#ctx.probe;
    let i = this.#leg;
    while (i < last - 1 && (cum[i + 1] as number) <= to) {
      if (probe) probe(this.person.id, this.person.x, this.person.y, xs[i + 1] as number, ys[i + 1] as number);
      this.person.x = xs[i + 1] as number;
      this.person.y = ys[i + 1] as number;
      i++;
    }
    let x: number;
    let y: number;
    if (last <= 0 || to >= path.total) {
      // Snap exactly onto the end: seated people must not drift by rounding.
      x = xs[last] as number;
      y = ys[last] as number;
    } else {
      const len = (cum[i + 1] as number) - (cum[i] as number);
      const f = len > 0 ? (to - (cum[i] as number)) / len : 1;
      x = (xs[i] as number) + ((xs[i + 1] as number) - (xs[i] as number)) * f;
      y = (ys[i] as number) + ((ys[i + 1] as number) - (ys[i] as number)) * f;
    }
    if (probe) probe(this.person.id, this.person.x, this.person.y, x, y);
    this.person.x = x;
    this.person.y = y;
    this.#leg = i;
    this.#dist = to;
  }

  #arrive(t: number): void {
    this.#path = null;
    switch (this.#goal) {
      case 'desk':
        this.#sitAtDesk(t);
        return;
      case 'activity':
        this.#settle('activity', 'standing', t + this.#dwellMs);
        return;
      case 'meeting':
        this.#settle('meeting', 'sitting', this.#untilMs);
        return;
      case 'exit':
        this.person.roomId = null;
        this.#phase = 'absent';
        this.#planDayFrom(nextDay((this.#day as DayPlan).dayStartMs, this.#ctx.zone), t);
        return;
    }
  }

  #settle(phase: Phase, posture: Posture, untilMs: number): void {
    this.#phase = phase;
    this.person.posture = posture;
    this.#untilMs = untilMs;
    this.#wakeMs = untilMs;
  }

  #sitAtDesk(t: number): void {
    const rate = this.#ctx.activities.reduce((s, a) => s + a.rate, 0);
    this.#nextTripMs = rate > 0 ? t + Math.max(this.#ctx.tickMs, this.#rng.exponential(1 / rate)) : Infinity;
    this.#settle('desk', 'sitting', Infinity);
    this.#wakeMs = Math.min((this.#day as DayPlan).leaveMs, this.#nextTripMs);
  }

  /** The first local day from `dayStartMs` whose departure is still ahead of t. */
  #planDayFrom(dayStartMs: number, t: number): void {
    let day = drawDayPlan(this.#ctx.pop, this.#ctx.zone, dayStartMs, this.#rng);
    while (day.leaveMs <= t)
      day = drawDayPlan(this.#ctx.pop, this.#ctx.zone, nextDay(day.dayStartMs, this.#ctx.zone), this.#rng);
    this.#day = day;
    this.#wakeMs = day.arriveMs;
  }

  #startTrip(t: number): void {
    const activity = this.#pickActivity();
    const room = activity ? this.#rng.pick(activity.rooms) : null;
    if (activity && room) {
      this.#dwellMs = Math.max(this.#ctx.tickMs, this.#rng.exponential(activity.dwellMs));
      if (this.#walkTo({ kind: 'inside', roomId: room.id, at: randomSpot(room, this.#rng) }, 'activity')) return;
    }
    this.#sitAtDesk(t); // unreachable destination: stay and try again later
  }

  /** Superposed Poisson trips: the kind of trip is chosen in proportion to its rate. */
  #pickActivity(): ActivityPlan | null {
    const acts = this.#ctx.activities;
    let r = this.#rng.next() * acts.reduce((s, a) => s + a.rate, 0);
    for (const a of acts) {
      r -= a.rate;
      if (r < 0) return a;
    }
    return acts[acts.length - 1] ?? null;
  }

  #leave(): void {
    const door = this.#pickEntrance();
    if (!this.#walkTo({ kind: 'outside', door }, 'exit')) this.#wakeMs = Infinity;
  }

  #pickEntrance(): DoorGeo {
    return this.#rng.pick(this.#ctx.entrances);
  }

  /** Starts walking from where the person is (or from outside `via`) to `to`. */
  #walkTo(to: Endpoint, goal: Goal, via?: DoorGeo): boolean {
    const from: Endpoint = via
      ? { kind: 'outside', door: via }
      : { kind: 'inside', roomId: this.person.roomId ?? this.#deskRoom, at: [this.person.x, this.person.y] };
    const path = planPath(this.#ctx.plan, from, to, this.#rng);
    if (!path) return false;
    this.#path = path;
    this.#dist = 0;
    this.#leg = 0;
    this.#cross = 0;
    this.#goal = goal;
    this.#phase = 'walking';
    this.person.posture = 'walking';
    this.person.x = path.xs[0] as number;
    this.person.y = path.ys[0] as number;
    this.#wakeMs = Infinity;
    return true;
  }
}
