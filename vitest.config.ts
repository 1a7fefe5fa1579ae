import { defineConfig } from 'vitest/config';

/**
 * Three projects: `fast` (`npm test`, the loop after a change: unit, property and the quick
 * end-to-end tests, a few minutes on 2 cores), `slow` and `serial` (with `fast`,
 * `npm run test:all`, what CI runs). A file is slow when it starts other programs (Chromium,
 * PostgreSQL, mosquitto, Python, promtool, the CLI), runs whole scenarios or served platforms
 * over sockets for many seconds, or fuzzes; measured per file on the 2-core machine. Nothing
 * is skipped by the split: every file is in exactly one project (test/test-split.test.ts).
 * New slow files can also be named `*.slow.test.ts`.
 */
export const SLOW_TESTS = [
  'test/**/*.slow.test.ts',
  'test/adversarial/api-abuse.test.ts',
  'test/adversarial/device-identity.test.ts',
  'test/adversarial/isolation-matrix.test.ts',
  'test/adversarial/memory-bound.test.ts',
  'test/adversarial/mqtt-fuzz.test.ts',
  'test/adversarial/past-minute-flood.test.ts',
  'test/adversarial/scenario-mutations.test.ts',
  'test/api/browse.test.ts',
  'test/api/live/live.test.ts',
  'test/api/live/routes.test.ts',
  'test/api/live/stream.test.ts',
  'test/api/metrics.test.ts',
  'test/api/server.test.ts',
  'test/api/state/postgres-state.test.ts',
  'test/broker/external.test.ts',
  'test/broker/restart.test.ts',
  'test/capture/listen.test.ts',
  'test/capture/recorder.test.ts',
  'test/cli/deadletters.test.ts',
  'test/cli/problems.test.ts',
  'test/cli/report-merge.test.ts',
  'test/cli/serve-startup.test.ts',
  'test/cli/serve-tenants.test.ts',
  'test/cli/serve.test.ts',
  'test/cli/status.test.ts',
  'test/cli/store-commands.test.ts',
  'test/cloud/crash.test.ts',
  'test/cloud/dst-run.test.ts',
  'test/cloud/partitioned-clouds.test.ts',
  'test/cloud/pipeline-outbox.test.ts',
  'test/cloud/shared-subscription.test.ts',
  'test/store/postgres-contract.test.ts',
  'test/store/schema-parity.test.ts',
  'test/store/postgres-leases.test.ts',
  'test/store/postgres-race.test.ts',
  'test/store/postgres-run.test.ts',
  'test/store/status-migration.test.ts',
  'test/store/webhook-migration.test.ts',
  'test/store/webhook-store-contract.test.ts',
  'test/compat/compat.test.ts',
  'test/core/heap-growth.test.ts',
  'test/edge/frame-run.test.ts',
  'test/edge/frames-viewer.test.ts',
  'test/edge/traffic-calibration.test.ts',
  'test/explore/explore.test.ts',
  'test/explore/pool.test.ts',
  'test/firmware/walkthrough.test.ts',
  'test/hive/hive-threads.test.ts',
  'test/hive/outage-scenario.test.ts',
  'test/hive/ramp-scenario.test.ts',
  'test/interop/graphql-codegen.test.ts',
  'test/interop/openapi-client.test.ts',
  'test/interop/promtool.test.ts',
  'test/interop/python-device.test.ts',
  'test/library/packed-tarball.test.ts',
  'test/mcp/aliases.test.ts',
  'test/mcp/isolation.test.ts',
  'test/mcp/readonly.test.ts',
  'test/mcp/resources.test.ts',
  'test/mcp/stdio.test.ts',
  'test/mcp/tools.test.ts',
  'test/store/guard.test.ts',
  'test/store/location.test.ts',
  'test/platform/thread.test.ts',
  'test/report/html.test.ts',
  'test/run/distributed.test.ts',
  'test/run/resume-outbox.test.ts',
  'test/run/resume.test.ts',
  'test/run/run-scenario.test.ts',
  'test/run/shard-resume.test.ts',
  'test/run/shard.test.ts',
  'test/run/start-override.test.ts',
  'test/run/store-accuracy.test.ts',
  'test/scenario/grid-cost.test.ts',
  'test/webhooks/attempt-handler.test.ts',
  'test/webhooks/e2e.test.ts',
  'test/webhooks/lanes.test.ts',
  'test/webhooks/postgres-e2e.test.ts',
  'test/webhooks/timestamps.test.ts',
];

/**
 * The slow files whose assertions bound wall time (a page updated within 2 s, a lease taken
 * over within two leases, delivery latency, the adversarial suite's limits, start-up and
 * SIGTERM bounds) or that size themselves to the machine (`explore --jobs auto`): they run
 * one at a time, after the others, so that no other test file shares the two cores with them.
 */
export const SERIAL_TESTS = [
  'test/explore/bounded-search.slow.test.ts',
  'test/run/distributed-faults.slow.test.ts',
  'test/mcp/watch.slow.test.ts',
  'test/adversarial/api-abuse.test.ts',
  'test/adversarial/mqtt-fuzz.test.ts',
  'test/adversarial/past-minute-flood.test.ts',
  'test/adversarial/scenario-mutations.test.ts',
  'test/api/live/live.test.ts',
  'test/api/live/stream.test.ts',
  'test/cli/serve-startup.test.ts',
  'test/cli/serve.test.ts',
  'test/run/distributed.test.ts',
  'test/webhooks/attempt-handler.test.ts',
  'test/webhooks/lanes.test.ts',
];

/**
 * Vitest's default is one worker fewer than the cores: one worker on the 2-core machine, and
 * the whole run serial. The fast and slow files take both cores (their bounds are CPU time or
 * generous); the serial ones one, in a later group (`sequence.groupOrder`).
 */
const PARALLEL_WORKERS = 2;

export default defineConfig({
  resolve: {
    // graphql ships CJS (main) and ESM (module) builds; mercurius loads the CJS one, so the
    // tests must too, or two GraphQLError classes exist and instanceof checks fail.
    alias: [{ find: /^graphql$/, replacement: 'graphql/index.js' }],
  },
  test: {
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    projects: [
      {
        extends: true,
        test: {
          name: 'fast',
          include: ['test/**/*.test.ts'],
          exclude: SLOW_TESTS,
          maxWorkers: PARALLEL_WORKERS,
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: {
          name: 'slow',
          include: SLOW_TESTS,
          exclude: SERIAL_TESTS,
          maxWorkers: PARALLEL_WORKERS,
          sequence: { groupOrder: 0 },
        },
      },
      { extends: true, test: { name: 'serial', include: SERIAL_TESTS, maxWorkers: 1, sequence: { groupOrder: 1 } } },
    ],
  },
});
