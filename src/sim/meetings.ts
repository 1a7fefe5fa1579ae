import type { Vec2 } from '../core/geometry.js';
import type { MeetingModel } from '../scenario/model.js';
import type { Agent } from './agent.js';
import type { RoomGeo } from './floorplan.js';
import { localDayStart, localInstant, nextDailyAt, nextDay } from './schedule.js';

/**
 * A daily meeting: at its local time, the `attendees` people seated on the floor with the
 * smallest invitation keys go to the room, sit at distinct spots and stay `durationMs`.
 * The key mixes each person's own daily draw with the meeting's id, so two meetings on a
 * floor invite different people and no shared stream is needed.
 */
export interface MeetingRunner {
  /** Convenes the meeting if its instant has come (call once per tick, after movement). */
  tick(t: number): void;
}

export function createMeetingRunner(
  meeting: MeetingModel,
  room: RoomGeo,
  zone: string,
  people: readonly Agent[],
  startMs: number,
): MeetingRunner {
  const salt = hashFraction(meeting.id);
  let nextAt = nextDailyAt(meeting.atMin, zone, localDayStart(startMs, zone), startMs);
  return {
    tick(t) {
      if (t < nextAt) return;
      convene(t, nextAt + meeting.durationMs);
      nextAt = localInstant(nextDay(localDayStart(nextAt, zone), zone), meeting.atMin, zone);
    },
  };

  function convene(t: number, untilMs: number): void {
    const seated = people.filter((p) => p.isSeated(t));
    const key = (p: Agent): number => (p.meetingKey + salt) % 1;
    seated.sort((a, b) => key(a) - key(b) || (a.person.id < b.person.id ? -1 : 1));
    const taken: Vec2[] = [];
    for (const p of seated.slice(0, meeting.attendees)) p.joinMeeting(room, taken, untilMs);
  }
}

/** FNV-1a of the string, as a fraction in [0, 1). */
function hashFraction(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0) / 2 ** 32;
}
