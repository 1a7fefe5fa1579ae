/**
 * Start-up as a list of named steps (aedes' `connectActions` is the model): each step starts
 * one part and returns how to stop it; the list runs in order, and on a failure the parts
 * already started stop in reverse before the error goes on.
 *
 * The context `C` is what the steps share: a step reads what earlier steps put there and adds
 * its own part.
 */
export type StopPart = () => Promise<void> | void;

export interface StartStep<C> {
  readonly name: string;
  /** Starts the part; returns its stop, or nothing when there is nothing to stop. */
  start(ctx: C): Promise<StopPart | void> | StopPart | void;
}

export interface Started {
  /** Every started part's stop, last started first; each runs once, later calls do nothing. */
  stop(): Promise<void>;
}

export interface StepsOptions {
  /**
   * Called as each step has started, in order: a caller timing its start-up (the run's
   * `perf.startup`) closes a phase per step here, so the breakdown is the step list itself.
   */
  onStarted?: (name: string) => void;
}

export async function startSteps<C>(
  steps: readonly StartStep<C>[],
  ctx: C,
  options: StepsOptions = {},
): Promise<Started> {
  const stops: StopPart[] = [];
  const stop = async (): Promise<void> => {
    const errors: unknown[] = [];
    for (const s of stops.splice(0).reverse()) {
      try {
        await s();
      } catch (err) {
        errors.push(err);
      }
    }
    if (errors.length === 1) throw errors[0];
    if (errors.length > 1) throw new AggregateError(errors, `${errors.length} parts failed to stop`);
  };
  for (const step of steps) {
    try {
      const s = await step.start(ctx);
      if (s) stops.push(s);
    } catch (err) {
      // The step's own failure is the one reported; a stop failing after it is secondary.
      await stop().catch(() => undefined);
      throw err;
    }
    options.onStarted?.(step.name);
  }
  return { stop };
}
