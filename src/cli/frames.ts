import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { AppError, ErrorCodes } from '../core/errors.js';
import { isoLocal, parseDuration } from '../core/time.js';
import { frameSensor, personTable, record, takeBatch } from '../edge/frame-stage.js';
import { FrameRecorder } from '../edge/frame/recorder.js';
import { runBatch } from '../edge/frame/kernel.js';
import { stateViews } from '../edge/frame/state.js';
import { PERSON_STRIDE } from '../edge/frame/synth.js';
import { encodePng } from '../edge/frame/png.js';
import { encodeGif } from '../edge/frame/gif.js';
import { labelledFrame, PALETTE, tileIndexed, toRgb, type IndexedImage } from '../edge/frame/labelled.js';
import { formatDiagnostic } from '../scenario/diagnostics.js';
import { loadScenarioFile } from '../scenario/load.js';
import type { ScenarioModel, SensorModel } from '../scenario/model.js';
import { createWorld } from '../sim/world.js';
import type { Flags, Io } from './commands.js';

/**
 * `occusim frames <scenario> --sensor <id|name> --from <t> --to <t> --out dir/ [--gif FILE]
 * [--true-positions]`: what one sensor saw, as labelled PNG heat maps (sensor, simulated local
 * time, colour scale in °C, detections as white crosses, true positions as green rings when
 * asked), one file per frame, a labelled contact sheet, and optionally an animated GIF of the
 * period. Times are a local clock time on the first day (09:00) or an offset from the start
 * (30m); a period outside the scenario is refused (exit 2). The world and the sensor run from
 * the start so the background model is what it would be in a run.
 */
const MAX_FILES = 600;
const MAX_GIF_FRAMES = 600;
const SHEET_TILES = 24;

export function framesCommand(file: string, flags: Flags, io: Io): number {
  const loaded = loadScenarioFile(file, { fidelity: 'frame' });
  if (!loaded.ok)
    throw new AppError(
      ErrorCodes.SCENARIO_INVALID,
      `invalid scenario:\n${loaded.diagnostics.map(formatDiagnostic).join('\n')}`,
    );
  const model = loaded.model;
  const sensor = pickSensor(model, flags.sensor);
  const fromMs = timeFlag(model, 'from', flags.from);
  const toMs = timeFlag(model, 'to', flags.to);
  if (toMs <= fromMs) throw usage('--to must be after --from');
  checkPeriod(model, fromMs, toMs);
  if (typeof flags.out !== 'string') throw usage('occusim frames needs --out DIR');
  if (flags.gif !== undefined && (typeof flags.gif !== 'string' || flags.gif === ''))
    throw usage('--gif needs a file path');
  const out = flags.out;
  mkdirSync(out, { recursive: true });
  const s = frameSensor(model, sensor);
  const expected = Math.floor(((toMs - fromMs) / 1000) * s.spec.fps) + 1;
  const fileStep = Math.max(1, Math.ceil(expected / MAX_FILES));
  const gifStep = Math.max(1, Math.ceil(expected / MAX_GIF_FRAMES));
  const sheetStep = Math.max(1, Math.ceil(expected / SHEET_TILES));
  const base = sensor.name.replace(/[^\w.-]+/g, '_');
  const sheet: IndexedImage[] = [];
  const gif: IndexedImage[] = [];
  let written = 0;
  const frames = captureFrames(model, sensor, fromMs, toMs, flags['true-positions'] === true, (im, k) => {
    if (k % fileStep === 0) {
      const rgb = toRgb(im);
      writeFileSync(join(out, `${base}-${String(k).padStart(5, '0')}.png`), encodePng(rgb.width, rgb.height, rgb.rgb));
      written++;
    }
    if (k % sheetStep === 0 && sheet.length < SHEET_TILES) sheet.push(im);
    if (typeof flags.gif === 'string' && k % gifStep === 0) gif.push(im);
  });
  if (frames === 0) throw usage(`${sensor.name} produced no frame between --from and --to`);
  const tiled = toRgb(tileIndexed(sheet, 6));
  writeFileSync(join(out, 'sheet.png'), encodePng(tiled.width, tiled.height, tiled.rgb));
  if (typeof flags.gif === 'string') writeFileSync(flags.gif, encodeGif(gif, PALETTE, (gifStep * 100) / s.spec.fps));
  io.stdout.write(
    `${sensor.name} (${sensor.model}, ${sensor.mode}): ${frames} frames, ${written} PNG files and sheet.png in ${out}${typeof flags.gif === 'string' ? `, ${gif.length}-frame GIF ${flags.gif}` : ''}\n`,
  );
  return 0;
}

/** The period must lie inside the scenario: frames before its start or after its end do not exist. */
function checkPeriod(model: ScenarioModel, fromMs: number, toMs: number): void {
  const endMs = model.startMs + model.durationMs;
  const zone = model.sites[0]?.timezone ?? 'UTC';
  const local = (ms: number): string => isoLocal(ms, zone).replace('T', ' ');
  if (fromMs < model.startMs || toMs > endMs) {
    throw usage(
      `the period ${local(fromMs)} … ${local(toMs)} is outside the scenario, which runs from ${local(model.startMs)} to ${local(endMs)}`,
    );
  }
}

/** Renders every frame of [fromMs, toMs] labelled and hands it to `onFrame` with its index; returns the count. */
function captureFrames(
  model: ScenarioModel,
  sensor: SensorModel,
  fromMs: number,
  toMs: number,
  showTruth: boolean,
  onFrame: (im: IndexedImage, k: number) => void,
): number {
  const s = frameSensor(model, sensor);
  const people = personTable(model.seed);
  const rec = new FrameRecorder(1);
  const world = createWorld(model);
  const scale = Math.max(4, Math.round(256 / s.spec.cols));
  const [lo, hi] = [Math.floor(s.spec.ambientC - 1), Math.ceil(s.spec.ambientC + 7)];
  const st = stateViews(s.spec.cols * s.spec.rows, s.state);
  const zone = model.sites[0]?.timezone ?? 'UTC';
  const title = `${sensor.name} (${sensor.model})`;
  let k = 0;
  for (let t = model.startMs; t <= toMs; t += model.tickMs) {
    world.step(t);
    rec.tick(t);
    record(rec, 0, s, world.peopleOnFloor(sensor.floorId), people);
    runBatch(s.spec, st, takeBatch(rec), (atMs, frame, buf, count, det, found) => {
      if (atMs < fromMs || atMs > toMs) return;
      const truth: Array<[number, number]> = [];
      for (let i = 0; i < count; i++) {
        const [x, y] = [
          (buf[i * PERSON_STRIDE] as number) / s.spec.side,
          (buf[i * PERSON_STRIDE + 1] as number) / s.spec.side,
        ];
        // Only the people inside the frame: the table also holds those near it (their heat spills in).
        if (x >= 0 && x <= 1 && y >= 0 && y <= 1) truth.push([x, y]);
      }
      const detections: Array<[number, number]> = [];
      for (let d = 0; d < found; d++)
        detections.push([(det[2 * d] as number) / s.spec.cols, (det[2 * d + 1] as number) / s.spec.rows]);
      const time = frameTime(atMs, zone);
      onFrame(
        labelledFrame({
          frame,
          cols: s.spec.cols,
          rows: s.spec.rows,
          scale,
          lo,
          hi,
          overlay: { detections, truth },
          showTruth,
          label: { title, time },
        }),
        k++,
      );
    });
  }
  return k;
}

/** `2026-03-02 08:10:00.125 +01:00`: always the same length, so every frame has the same size. */
function frameTime(ms: number, zone: string): string {
  const at = Math.round(ms); // frame instants are fractional at 30 fps
  const whole = Math.floor(at / 1000) * 1000;
  const iso = isoLocal(whole, zone); // 2026-03-02T08:10:00+01:00 (or …Z)
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)}.${String(at - whole).padStart(3, '0')} ${iso.slice(19)}`;
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
  const parts = new Intl.DateTimeFormat('en-GB', {
    timeZone: zone,
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
    hourCycle: 'h23',
  }).formatToParts(new Date(model.startMs));
  const get = (t: string): number => Number(parts.find((p) => p.type === t)?.value ?? 0);
  return get('hour') * 3600_000 + get('minute') * 60_000 + get('second') * 1000;
}

function usage(message: string): AppError {
  return new AppError(ErrorCodes.USAGE, message);
}
