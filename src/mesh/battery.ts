import type { SensorMode } from '../scenario/model.js';

/**
 * Battery model of a sensor, pure: charge drawn per sample, per transmission attempt and per
 * frame received for a child, plus sleep current. Figures are typical of a thermopile
 * sensor on an 802.15.4 radio (platform-reference §6: "battery life 1–2 years depending on
 * mode"); docs/protocol.md §Battery lists them.
 */
export const SAMPLE_CURRENT_MA: Record<SensorMode, number> = { presence: 0.11, traffic: 0.25 };
export const SLEEP_CURRENT_MA = 0.004;
/** mA·s per transmission attempt (≈ 9 mA for ~5 ms with the ack) and per frame received. */
export const TX_MAS = 0.045;
export const RX_MAS = 0.035;
/** A battery is due for a change when its level reaches this. */
export const CHANGE_AT_LEVEL = 0.1;

export class Battery {
  #usedMas = 0;
  readonly #capacityMas: number;
  /** A battery_drain fault: what is left at `from` runs out linearly by `to` (then the sensor is dead). */
  #drain: { from: number; to: number } | null = null;

  constructor(
    capacityMah: number,
    private readonly startMs: number,
  ) {
    this.#capacityMas = capacityMah * 3600;
  }

  get wired(): boolean {
    return this.#capacityMas === 0;
  }

  /** A battery_drain fault (src/mesh/faults.ts): empty at `to`. A wired sensor's level stays 1 (its power is cut at `to`). */
  drainOver(from: number, to: number): void {
    if (this.#drain === null || to < this.#drain.to) this.#drain = { from, to };
  }

  /** The share of the charge a drain leaves at t, 0..1 (1 outside any drain). */
  #drainLeft(t: number): number {
    const d = this.#drain;
    if (d === null || t < d.from) return 1;
    return t >= d.to ? 0 : (d.to - t) / (d.to - d.from);
  }

  sample(mode: SensorMode, periodMs: number): void {
    this.#usedMas += SAMPLE_CURRENT_MA[mode] * (periodMs / 1000);
  }

  transmit(): void {
    this.#usedMas += TX_MAS;
  }

  receive(): void {
    this.#usedMas += RX_MAS;
  }

  #drawnMas(nowMs: number): number {
    return this.#usedMas + SLEEP_CURRENT_MA * ((nowMs - this.startMs) / 1000);
  }

  /** Remaining charge, 0..1 (1 for a wired sensor). */
  level(nowMs: number): number {
    return this.wired ? 1 : Math.max(0, 1 - this.#drawnMas(nowMs) / this.#capacityMas) * this.#drainLeft(nowMs);
  }

  /** Seconds until empty at the average drain so far (0 when nothing was drawn yet or wired). */
  runtimeS(nowMs: number): number {
    const elapsedS = (nowMs - this.startMs) / 1000;
    const drawn = this.#drawnMas(nowMs);
    if (this.wired || elapsedS <= 0 || drawn <= 0) return 0;
    const natural = Math.round((this.#capacityMas - drawn) / (drawn / elapsedS));
    const d = this.#drain;
    return d === null || nowMs < d.from ? natural : Math.min(natural, Math.max(0, Math.round((d.to - nowMs) / 1000)));
  }

  /** Epoch ms when the level reaches CHANGE_AT_LEVEL at the average drain so far. */
  changeByMs(nowMs: number): number | null {
    const elapsedS = (nowMs - this.startMs) / 1000;
    const drawn = this.#drawnMas(nowMs);
    if (this.wired || elapsedS <= 0 || drawn <= 0) return null;
    const usable = this.#capacityMas * (1 - CHANGE_AT_LEVEL) - drawn;
    const natural = nowMs + Math.round((usable / (drawn / elapsedS)) * 1000);
    const d = this.#drain;
    // Under a drain the level is linear to 0 at d.to: CHANGE_AT_LEVEL is reached a tenth of the window before.
    return d === null || nowMs < d.from
      ? natural
      : Math.min(natural, d.to - Math.round((d.to - d.from) * CHANGE_AT_LEVEL));
  }
}
