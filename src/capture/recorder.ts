import { AppError, ErrorCodes } from '../core/errors.js';
import type { Clock } from '../core/clock.js';
import type { ScenarioModel } from '../scenario/model.js';
import { captureHeader, CaptureWriter } from './format.js';

/** Records every message the embedded broker accepts, stamped with the simulated time. */
export interface Recorder {
  onPublish(topic: string, payload: Buffer): void;
  readonly count: number;
  close(): void;
}

export function startRecording(path: string, model: ScenarioModel, clock: Clock): Recorder {
  const hives = model.hives.map((h) => ({ serial: h.serial, sensors: model.sensors.filter((s) => s.hiveId === h.id).map((s) => s.mac) }));
  const writer = new CaptureWriter(path, captureHeader({ scenario: model.name, seed: model.seed, startMs: model.startMs, hives }));
  let closed = false;
  return {
    onPublish(topic, payload) {
      if (!closed) writer.write(clock.now(), topic, payload);
    },
    get count() {
      return writer.count;
    },
    close() {
      if (closed) return;
      closed = true;
      writer.close();
    },
  };
}

/** The recorder `runScenario` needs for its options, or null (recording taps the embedded broker only). */
export function recorderFor(options: { record?: string; brokerUrl?: string }, model: ScenarioModel, clock: Clock): Recorder | null {
  if (options.record === undefined) return null;
  if (options.brokerUrl !== undefined) {
    throw new AppError(ErrorCodes.USAGE, '--record taps the embedded broker: it cannot be combined with --broker (record with the embedded broker, then replay to yours)');
  }
  return startRecording(options.record, model, clock);
}
