'use strict';
/* global require, process, setInterval */
/* eslint-disable @typescript-eslint/no-require-imports -- a `node -r` preload is CommonJS: only -r preloads reach worker threads on Node 20 (`--import` does not) */
/**
 * A `node -r` preload for the benches (not part of occusim): every thread of the process (the
 * run's thread, the platform's thread, hive threads, frame workers — `-r` is inherited by
 * worker threads) samples its own CPU time (`/proc/thread-self/schedstat`, Linux: ns on a core,
 * not stretched by other processes waiting for the cores as a wall-time profile is) and its
 * garbage collector's pauses (`gc` performance entries) and the whole process's CPU time every 500 ms, and keeps the series in
 * `$OCCUSIM_THREAD_CPU_DIR/thread-<pid>-<threadId>.json` (rewritten at each sample, so a thread
 * ended by `terminate()` leaves its last one). A thread's role comes from its `workerData`
 * (the platform's init names `mqttPort`, a hive thread's `hiveIds`). The run's stopwatch starts
 * with the process's only argument-less `process.cpuUsage()` call (src/run/perf.ts,
 * `startStopwatch`): its instant is recorded as `wall0` so that `perf.startupMs` and `loopMs`
 * of the report place the loop on the series' clock (bench/thread-cpu.ts reads them).
 */
const { readFileSync, writeFileSync } = require('node:fs');
const { join } = require('node:path');
const { isMainThread, threadId, workerData } = require('node:worker_threads');
const { PerformanceObserver } = require('node:perf_hooks');

const dir = process.env.OCCUSIM_THREAD_CPU_DIR;
if (dir) {
  const role = isMainThread
    ? 'main'
    : workerData !== null && typeof workerData === 'object'
      ? 'mqttPort' in workerData
        ? 'platform'
        : 'hiveIds' in workerData
          ? 'hive'
          : 'worker'
      : 'worker';
  let gcMs = 0;
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) gcMs += e.duration;
  }).observe({ entryTypes: ['gc'] });
  let wall0 = null;
  const cpuUsage = process.cpuUsage.bind(process);
  if (isMainThread) {
    process.cpuUsage = (prev) => {
      if (prev === undefined && wall0 === null) wall0 = Date.now();
      return cpuUsage(prev);
    };
  }
  const cpuMs = () => Number(readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ')[0]) / 1e6;
  const series = [];
  const file = join(dir, `thread-${process.pid}-${threadId}.json`);
  const sample = () => {
    const u = cpuUsage();
    series.push([
      Date.now(),
      Math.round(cpuMs() * 10) / 10,
      Math.round(gcMs * 10) / 10,
      Math.round((u.user + u.system) / 100) / 10,
    ]);
    writeFileSync(file, JSON.stringify({ role, threadId, wall0, series }));
  };
  sample();
  setInterval(sample, 500).unref();
  process.on('exit', sample);
}
