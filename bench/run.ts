/**
 * `npm run bench`: throughput figures measured side by side in one run, printed as ratios
 * against a baseline measured in the same run (machines are shared and noisy: compare
 * ratios, not absolute numbers across runs). Results are recorded in bench/README.md.
 */
import { fileURLToPath } from 'node:url';
import { runApiBench } from './api.js';
import { runCapacityBench } from './capacity.js';
import { runCodecBench } from './codec.js';
import { runEdgeBench } from './edge.js';
import { runExploreBench } from './explore.js';
import { runFoundationBench } from './foundation.js';
import { runGoldenBench } from './golden.js';
import { runMcpBench } from './mcp.js';
import { runDeliveryBench } from './delivery.js';
import { runDistributedBench } from './distributed.js';
import { runDistributedScaleBench } from './distributed-scale.js';
import { runPipelineBench } from './pipeline.js';
import { runPlatformBench } from './platform.js';
import { runReportingBench } from './reporting.js';
import { runScaleBench } from './scale.js';
import { runWebhookReceiverBench } from './webhook-receiver-cost.js';
import { runWebhooksBench } from './webhooks.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const only = process.argv[2];

if (only === undefined || only === 'foundation') await runFoundationBench(root);
if (only === undefined || only === 'api') await runApiBench(root);
if (only === undefined || only === 'edge') await runEdgeBench();
if (only === undefined || only === 'codec') await runCodecBench();
if (only === undefined || only === 'pipeline') await runPipelineBench(root);
if (only === undefined || only === 'delivery') await runDeliveryBench(root);
if (only === undefined || only === 'reporting') await runReportingBench();
if (only === undefined || only === 'platform') await runPlatformBench(root, process.argv[3]);
if (only === undefined || only === 'mcp') await runMcpBench(root);
if (only === undefined || only === 'webhooks') await runWebhooksBench(root, process.argv[3], process.argv[4]);
if (only === 'webhook-receiver') await runWebhookReceiverBench(root, process.argv[3], process.argv[4], process.argv[5]);
// Needs mosquitto and PostgreSQL: run on its own only.
if (only === 'distributed') await runDistributedBench(root, process.argv[3]);
if (only === 'distributed-scale') await runDistributedScaleBench(root, process.argv.slice(3));
// A check, not a measurement: run on its own (exits 1 when a result changed).
if (only === 'golden') await runGoldenBench(root, process.argv.slice(3));
if (only === 'capacity') await runCapacityBench(root, process.argv.slice(3));
if (only === undefined || only === 'explore') await runExploreBench(root, process.argv[3]);
if (only === undefined || only === 'scale')
  await runScaleBench(root, process.argv[3], process.argv[4], process.argv[5], process.argv[6]);
