import { stableId } from '../core/ids.js';
import { MINUTE_MS, parseClockTime, parseDuration } from '../core/time.js';
import type { Seg } from './diagnostics.js';
import { lookup, type FloorParent, type FloorScope } from './floor-scope.js';
import type { DoorModel, MeetingModel, PopulationModel, RoomModel, TimeOfDayDist } from './model.js';
import { claimId, error, NameSet, parseAt, warn, type Ctx } from './resolve-context.js';
import { meetingSchema, peopleSchema, type PeopleFile } from './schema.js';

/** People groups and meetings of one floor. References are checked against the floor. */
export function resolvePeople(ctx: Ctx, fs: FloorScope, items: readonly unknown[], parent: FloorParent): void {
  const names = new NameSet('people group', `floor \`${fs.floor.name}\``);
  items.forEach((raw, i) => {
    const path = [...fs.path, 'people', i];
    const p = parseAt(ctx, peopleSchema, raw, path);
    if (p === null || !names.add(ctx, p.name, i, path)) return;
    const pop = resolveGroup(ctx, fs, p, path, parent);
    if (pop === null) return;
    claimId(ctx, pop.id, path, `people group \`${p.name}\``);
    ctx.lists.populations.push(pop);
  });
}

function resolveGroup(
  ctx: Ctx,
  fs: FloorScope,
  p: PeopleFile,
  path: readonly Seg[],
  parent: FloorParent,
): PopulationModel | null {
  const desks = rooms(ctx, fs, p.desks, [...path, 'desks']);
  const entrances = entranceDoors(ctx, fs, p, path);
  const activities = (p.activities ?? []).map((a, k) => {
    const at = [...path, 'activities', k];
    const everyMs = positiveMs(ctx, a.every, [...at, 'every']);
    const dwellMs = positiveMs(ctx, a.dwell, [...at, 'dwell']);
    const roomIds = rooms(ctx, fs, a.to, [...at, 'to']);
    return roomIds === null ? null : { roomIds, everyMs, dwellMs };
  });
  if (desks === null || entrances === null || activities.some((a) => a === null)) return null;
  return {
    id: stableId('person', ...fs.names, p.name),
    name: p.name,
    siteId: parent.siteId,
    buildingId: parent.buildingId,
    floorId: fs.floor.id,
    count: p.count,
    homeRoomIds: desks,
    entranceDoorIds: entrances,
    arrival: timeDist(p.arrival),
    departure: timeDist(p.departure),
    activities: activities.filter((a) => a !== null),
    src: ctx.pointerOf(path),
  };
}

/** Room ids for a list of names; null when any is unknown (each one reported). */
function rooms(ctx: Ctx, fs: FloorScope, names: readonly string[], path: readonly Seg[]): string[] | null {
  const found = names.map((n, k) => lookup<RoomModel>(ctx, fs, 'room', n, [...path, k]));
  return found.every((r) => r !== null) ? found.map((r) => r.id) : null;
}

function entranceDoors(ctx: Ctx, fs: FloorScope, p: PeopleFile, path: readonly Seg[]): string[] | null {
  const all = [...fs.doors.values()].filter((d) => d.entrance);
  if (p.entrance === undefined) {
    if (all.length > 0) return all.map((d) => d.id);
    // A floor whose doors failed validation may well have had an entrance: don't guess.
    if (fs.raw.door.size > fs.doors.size) return null;
    error(
      ctx,
      path,
      `people \`${p.name}\`: floor \`${fs.floor.name}\` has no entrance door (add a door with \`entrance: <room>\`)`,
    );
    return null;
  }
  const list = typeof p.entrance === 'string' ? [p.entrance] : p.entrance;
  const at = (k: number): Seg[] => (typeof p.entrance === 'string' ? [...path, 'entrance'] : [...path, 'entrance', k]);
  const doors = list.map((n, k) => lookup<DoorModel>(ctx, fs, 'door', n, at(k)));
  doors.forEach((d, k) => {
    if (d !== null && !d.entrance)
      error(ctx, at(k), `door \`${d.name}\` is not an entrance of the floor (it has \`between:\`, not \`entrance:\`)`);
  });
  return doors.every((d) => d !== null && d.entrance) ? doors.map((d) => (d as DoorModel).id) : null;
}

function timeDist(t: { mean: string; sd?: string | undefined }): TimeOfDayDist {
  return { meanMin: parseClockTime(t.mean) ?? 0, sdMin: (parseDuration(t.sd ?? '0s') ?? 0) / MINUTE_MS };
}

function positiveMs(ctx: Ctx, text: string, path: readonly Seg[]): number {
  const ms = parseDuration(text) ?? 0;
  if (ms <= 0) error(ctx, path, 'must be a duration > 0');
  return ms;
}

export function resolveMeetings(ctx: Ctx, fs: FloorScope, items: readonly unknown[]): void {
  const names = new NameSet('meeting', `floor \`${fs.floor.name}\``);
  const people = ctx.lists.populations.filter((p) => p.floorId === fs.floor.id).reduce((n, p) => n + p.count, 0);
  items.forEach((raw, i) => {
    const path = [...fs.path, 'meetings', i];
    const m = parseAt(ctx, meetingSchema, raw, path);
    if (m === null || !names.add(ctx, m.name, i, path)) return;
    const room = lookup<RoomModel>(ctx, fs, 'room', m.room, [...path, 'room']);
    const durationMs = positiveMs(ctx, m.duration, [...path, 'duration']);
    if (m.attendees > people)
      warn(
        ctx,
        [...path, 'attendees'],
        `meeting \`${m.name}\` wants ${m.attendees} attendees but the floor has ${people} people`,
      );
    if (room === null) return;
    const meeting: MeetingModel = {
      id: stableId('event', ...fs.names, 'meeting', m.name),
      name: m.name,
      floorId: fs.floor.id,
      roomId: room.id,
      atMin: parseClockTime(m.at) ?? 0,
      durationMs,
      attendees: m.attendees,
      src: ctx.pointerOf(path),
    };
    claimId(ctx, meeting.id, path, `meeting \`${m.name}\``);
    ctx.lists.meetings.push(meeting);
  });
}
