import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { AppError, ErrorCodes } from '../core/errors.js';
import { parseDuration } from '../core/time.js';
import { frameSensor, personTable, record, takeBatch } from '../edge/frame-stage.js';
import { runBatch } from '../edge/frame/kernel.js';
import { stateViews } from '../edge/frame/state.js';
import { PERSON_STRIDE } from '../edge/frame/synth.js';
import { encodePng } from '../edge/frame/png.js';
import { renderFrame, tile, type FrameImage } from '../edge/frame/render.js';
import { formatDiagnostic } from '../scenario/diagnostics.js';
import { loadScenarioFile } from '../scenario/load.js';
import type { ScenarioModel, SensorModel } from '../scenario/model.js';
import { createWorld } from '../sim/world.js';
import type { Flags, Io } from './commands.js';

/**
 * `occusim frames <scenario> --sensor <id|name> --from <t> --to <t> --out dir/`: what one
 * sensor saw, as PNG heat maps with detections (white crosses) and true positions (green
 * rings), one file per frame plus a tiled contact sheet. Times are a local clock time on the
 * first day (09:00) or an offset from the start (30m). The world and the sensor run from
 * the start so the background model is what it would be in a run.
 */
const MAX_FILES = 600;
const SHEET_TILES = 24;

export function framesCommand(file: string, flags: Flags, io: Io): number {
  const loaded = loadScenarioFile(file, { fidelity: 'frame' });
  if (!loaded.ok) throw new AppError(ErrorCodes.SCENARIO_INVALID, `invalid scenario:\n${loaded.diagnostics.map(formatDiagnostic).join('\n')}`);
  const model = loaded.model;
  const sensor = pickSensor(model, flags.sensor);
  const fromMs = timeFlag(model, 'from', flags.from);
  const toMs = timeFlag(model, 'to', flags.to);
  if (toMs <= fromMs) throw usage('--to must be after --from');
  if (typeof flags.out !== 'string') throw usage('occusim frames needs --out DIR');
  mkdirSync(flags.out, { recursive: true });
  const images = captureFrames(model, sensor, fromMs, toMs);
  const step = Math.max(1, Math.ceil(images.length / MAX_FILES));
  let written = 0;
  images.forEach((im, k) => {
    if (k % step !== 0) return;
    writeFileSync(join(flags.out as string, `${sensor.name.replace(/[^\w.-]+/g, '_')}-${String(k).padStart(5, '0')}.png`), encodePng(im.width, im.height, im.rgb));
    written++;
  });
  const pick = Math.max(1, Math.ceil(images.length / SHEET_TILES));
  const sheet = tile(images.filter((_, k) => k % pick === 0), 6);
  writeFileSync(join(flags.out, 'sheet.png'), encodePng(sheet.width, sheet.height, sheet.rgb));
  io.stdout.write(`${sensor.name} (${sensor.model}, ${sensor.mode}): ${images.length} frames, ${written} PNG files and sheet.png in ${flags.out}\n`);
  return 0;
}

function captureFrames(model: ScenarioModel, sensor: SensorModel, fromMs: number, toMs: number): FrameImage[] {
  const s = frameSensor(model, sensor);
  const people = personTable(model.seed);
  const world = createWorld(model);
  const images: FrameImage[] = [];
  const scale = Math.max(4, Math.round(256 / s.spec.cols));
  const [lo, hi] = [s.spec.ambientC - 1, s.spec.ambientC + 7];
  const st = stateViews(s.spec.cols * s.spec.rows, s.state);
  for (let t = model.startMs; t <= toMs; t += model.tickMs) {
    world.step(t);
    record(s, t, world.peopleOnFloor(sensor.floorId), people);
    runBatch(s.spec, st, takeBatch(s), (atMs, frame, buf, count, det, found) => {
      if (atMs < fromMs || atMs > toMs) return;
      const truth: Array<[number, number]> = [];
      for (let k = 0; k < count; k++) truth.push([(buf[k * PERSON_STRIDE] as number) / s.spec.side, (buf[k * PERSON_STRIDE + 1] as number) / s.spec.side]);
      const detections: Array<[number, number]> = [];
      for (let d = 0; d < found; d++) detections.push([(det[2 * d] as number) / s.spec.cols, (det[2 * d + 1] as number) / s.spec.rows]);
      images.push(renderFrame(frame, s.spec.cols, s.spec.rows, scale, lo, hi, { detections, truth }));
    });
  }
  return images;
}

function pickSensor(model: ScenarioModel, flag: Flags[string]): SensorModel {
  if (typeof flag !== 'string') throw usage('occusim frames needs --sensor <id|name>');
  const found = model.sensors.find((s) => s.id === flag || s.name === flag);
  if (!found) throw usage(`no sensor ${JSON.stringify(flag)}; sensors: ${model.sensors.map((s) => s.name).join(', ')}`);
  return found;
}

/** HH:MM (local clock on the first day) or an offset from the start such as 30m. */
function timeFlag(model: ScenarioModel, name: string, flag: Flags[string]): number {
  if (typeof flag !== 'string') throw usage(`occusim frames needs --${name} (HH:MM local, or an offset like 30m)`);
  const clock = /^(\d{1,2}):(\d{2})(?::(\d{2}))?$/.exec(flag);
  if (clock) {
    const startLocal = localMinuteOfDay(model);
    const target = Number(clock[1]) * 3600_000 + Number(clock[2]) * 60_000 + Number(clock[3] ?? 0) * 1000;
    return model.startMs + target - startLocal;
  }
  const offset = parseDuration(flag);
  if (offset === null) throw usage(`--${name} must be HH:MM or a duration like 30m, got ${JSON.stringify(flag)}`);
  return model.startMs + offset;
}

/** Milliseconds after local midnight of the scenario start, in the first site's zone. */
function localMinuteOfDay(model: ScenarioModel): number {
  const zone = model.sites[0]?.timezone ?? 'UTC';
  const parts = new Intl.DateTimeFormat('en-GB', { timeZone: zone, hour: '2-digit', minute: '2-digit', second: '2-digit', hourCycle: 'h23' }).formatToParts(new Date(model.startMs));
  const get = (t: string): number => Number(parts.find((p) => p.type === t)?.value ?? 0);
  return get('hour') * 3600_000 + get('minute') * 60_000 + get('second') * 1000;
}

function usage(message: string): AppError {
  return new AppError(ErrorCodes.USAGE, message);
}
