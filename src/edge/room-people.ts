import type { PersonState } from '../sim/types.js';

/**
 * One floor's people grouped by room at the current instant, in reused arrays: the people of
 * room slot r are `people[start(r) … end(r))`, in the floor's order (a stable counting sort), so
 * a sensor reading its room's slice sees the same people in the same order as one filtering
 * the whole floor by room. Rebuilt by `fill` at every instant a sensor of the floor reports;
 * nothing is allocated once the arrays have grown to the floor's largest crowd. (A `Map` of
 * per-room arrays per floor and instant lived until the next scavenge, and at 100,000 sensors
 * the scavenges came often enough for them to survive and be promoted: bench/README.md,
 * "scale-main".)
 */
export class RoomPeople {
  /** Room id → slot; rooms of the floor no sensor watches have none (their people are skipped). */
  readonly #slotOf: ReadonlyMap<string, number>;
  /** Slot r's people start at `#start[r]`; `#start[slots]` is the end of the last. */
  readonly #start: Int32Array;
  /** Per person of the floor (index in `fill`'s list): its slot, or -1. */
  #slot = new Int32Array(64);
  readonly #people: PersonState[] = [];

  /** `roomIds`: the rooms to group (duplicates share a slot). */
  constructor(roomIds: Iterable<string>) {
    const slots = new Map<string, number>();
    for (const id of roomIds) if (!slots.has(id)) slots.set(id, slots.size);
    this.#slotOf = slots;
    this.#start = new Int32Array(slots.size + 1);
  }

  /** The slot of a room given to the constructor (-1: not one of them). */
  slotOf(roomId: string | null): number {
    return roomId === null ? -1 : (this.#slotOf.get(roomId) ?? -1);
  }

  /** The grouped people: a slot's are `people[start(r) … end(r))`. Valid until the next `fill`. */
  get people(): readonly PersonState[] {
    return this.#people;
  }

  start(slot: number): number {
    return this.#start[slot] as number;
  }

  end(slot: number): number {
    return this.#start[slot + 1] as number;
  }

  /** Groups `people` (the floor's, at this instant) by room. */
  fill(people: readonly PersonState[]): void {
    const start = this.#start;
    const slots = start.length - 1;
    if (this.#slot.length < people.length) this.#slot = new Int32Array(Math.max(people.length, this.#slot.length * 2));
    const slot = this.#slot;
    start.fill(0);
    // Count each slot's people into start[r + 1], then prefix sums: start[r] is slot r's first place.
    for (let i = 0; i < people.length; i++) {
      const r = this.slotOf((people[i] as PersonState).roomId);
      slot[i] = r;
      if (r >= 0) start[r + 1] = (start[r + 1] as number) + 1;
    }
    for (let r = 0; r < slots; r++) start[r + 1] = (start[r + 1] as number) + (start[r] as number);
    // Place in the floor's order, each slot's cursor at start[r]; the cursors end at the next
    // slot's start, so one shift by a slot puts the starts back.
    const out = this.#people;
    const total = start[slots] as number;
    // Places are written out of order: the array is first long enough (no holes).
    for (let k = out.length; k < total; k++) out.push(people[0] as PersonState);
    for (let i = 0; i < people.length; i++) {
      const r = slot[i] as number;
      if (r < 0) continue;
      out[start[r] as number] = people[i] as PersonState;
      start[r] = (start[r] as number) + 1;
    }
    for (let r = slots; r > 0; r--) start[r] = start[r - 1] as number;
    start[0] = 0;
    // Shrinking a JS array may trim its backing store and the next instant grow it again: only
    // when the floor emptied a lot. Stale entries past `total` are never read.
    if (out.length > 2 * total + 64) out.length = total;
  }
}
