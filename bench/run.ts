/**
 * `npm run bench`: throughput figures measured side by side in one run, printed as ratios
 * against a baseline measured in the same run (machines are shared and noisy: compare
 * ratios, not absolute numbers across runs). Results are recorded in bench/README.md.
 */
import { fileURLToPath } from 'node:url';
import { runFoundationBench } from './foundation.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const only = process.argv[2];

if (only === undefined || only === 'foundation') await runFoundationBench(root);
