// Preload for `npm run bench -- scale threads` (bench/scale-threads.ts), loaded with `node -r` into
// every thread of an `occusim run`: every 500 ms each thread appends one line to
// $OCCUSIM_THREAD_CPU_LOG — its thread id, the wall time (epoch ms), its own CPU time
// (/proc/thread-self/stat, user + system; other processes on the machine do not stretch it) and
// the whole process's CPU time — so the bench can read each thread's CPU over the loop.
// Linux only (/proc); elsewhere it writes nothing. A diagnostic: not part of occusim.
/* global process, require, setInterval */
/* eslint-disable @typescript-eslint/no-require-imports -- a -r preload is CommonJS: it must load in every worker thread */
'use strict';
const fs = require('node:fs');
const { threadId } = require('node:worker_threads');
const { performance } = require('node:perf_hooks');

const log = process.env.OCCUSIM_THREAD_CPU_LOG;
const TICK_MS = 1000 / 100; // clock ticks (USER_HZ) are 10 ms on Linux

function sample() {
  try {
    const stat = fs.readFileSync('/proc/thread-self/stat', 'utf8');
    // Fields after the command name's closing parenthesis: utime is the 12th, stime the 13th.
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const threadMs = (Number(f[11]) + Number(f[12])) * TICK_MS;
    const u = process.cpuUsage();
    fs.appendFileSync(log, `${threadId} ${Math.round(performance.timeOrigin + performance.now())} ${threadMs} ${Math.round((u.user + u.system) / 1000)}\n`);
  } catch {
    // No /proc (not Linux) or the log is gone: nothing to record.
  }
}

if (log) {
  setInterval(sample, 500).unref();
  process.on('exit', sample);
}
