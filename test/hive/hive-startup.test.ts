import { createServer, connect, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { startBroker, type EmbeddedBroker } from '../../src/broker/aedes-broker.js';
import { startRunHives } from '../../src/hive/hive-startup.js';
import { loadScenarioFile } from '../../src/scenario/load.js';
import type { ScenarioModel } from '../../src/scenario/model.js';

/**
 * The run's hive start-up steps against the real broker. A TCP relay on 127.0.0.1 between the
 * hives and the broker counts the hives' open connections: what the steps' stops must close.
 */
const loaded = loadScenarioFile(new URL('../../scenarios/office-day.yaml', import.meta.url).pathname);
if (!loaded.ok) throw new Error('office-day does not load');
const model: ScenarioModel = loaded.model;

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

/** The broker knows only `known` of the model's hives (the others' logins are refused). */
async function brokerFor(known: number): Promise<{ url: string; open: () => number }> {
  const broker: EmbeddedBroker = await startBroker({
    hives: model.hives.slice(0, known).map((h) => ({ serial: h.serial, password: h.password })),
    services: [],
  });
  closers.push(() => broker.close());
  const sockets = new Set<Socket>();
  const relay: Server = createServer((client) => {
    const upstream = connect(broker.port, '127.0.0.1');
    sockets.add(client);
    client.on('close', () => {
      sockets.delete(client);
      upstream.destroy();
    });
    upstream.on('close', () => client.destroy());
    client.on('error', () => undefined);
    upstream.on('error', () => undefined);
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
  closers.push(
    () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        relay.close(() => resolve());
      }),
  );
  return { url: `mqtt://127.0.0.1:${(relay.address() as AddressInfo).port}`, open: () => sockets.size };
}

/** Until the relay's count settles at `n` (a closed link's socket closes a round trip later). */
async function openBecomes(open: () => number, n: number): Promise<number> {
  for (let i = 0; i < 100 && open() !== n; i++) await new Promise((resolve) => setTimeout(resolve, 20));
  return open();
}

describe('the run’s hive start-up in the run’s thread', () => {
  it('logs every hive in, and closes every link when the run closes it', async () => {
    expect(model.hives.length).toBe(3);
    const { url, open } = await brokerFor(3);
    const hives = startRunHives(model, { threads: 0, ackTimeoutMs: 10_000 });
    const groups = await hives.connect(url);
    expect(open()).toBe(3);
    expect((await groups.report(model.startMs)).flatMap((g) => g.hives.map((h) => h.ledger.hive))).toEqual(
      model.hives.map((h) => h.serial),
    );
    await hives.close();
    expect(await openBecomes(open, 0)).toBe(0);
    // Stopped once: a second close has nothing left to stop.
    await hives.close();
  });

  it('closes the links of the hives logged in before a refused login, and reports the refusal', async () => {
    const { url, open } = await brokerFor(2);
    const hives = startRunHives(model, { threads: 0, ackTimeoutMs: 10_000 });
    await expect(hives.connect(url)).rejects.toMatchObject({ code: 'BROKER_FAILED' });
    expect(await openBecomes(open, 0)).toBe(0);
    await hives.close();
  });
});
