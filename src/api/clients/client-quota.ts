/**
 * How many machine-to-machine clients one organisation may hold (scenario clients included).
 * One token created 200 clients in a loop with nothing to stop it, each a 128 MiB scrypt and a
 * stored row (issue 16, finding 10). Creations in flight count too: creating a client awaits its
 * hash, so a burst of concurrent requests would otherwise all pass a check of the stored count.
 */
export const MAX_CLIENTS_PER_ORGANISATION = 50;

export class ClientQuota {
  readonly #inFlight = new Map<string, number>();

  constructor(
    readonly limit: number,
    /** Clients the organisation holds now. */
    private readonly held: (orgId: string) => number,
  ) {}

  /** Reserves a place, or returns null when the organisation is at its limit; release() the place once the creation is stored or failed. */
  reserve(orgId: string): { release(): void } | null {
    const pending = this.#inFlight.get(orgId) ?? 0;
    if (this.held(orgId) + pending >= this.limit) return null;
    this.#inFlight.set(orgId, pending + 1);
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        const left = (this.#inFlight.get(orgId) ?? 1) - 1;
        if (left === 0) this.#inFlight.delete(orgId);
        else this.#inFlight.set(orgId, left);
      },
    };
  }
}
