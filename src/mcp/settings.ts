import { isValidZone } from '../core/time.js';
import { invalid } from './errors.js';

/**
 * The tool server's settings, read once from the environment and frozen (spec §1, "Assistant
 * tool server"; docs/mcp.md lists them). Credentials may be missing: the server still starts,
 * and every tool answers VALIDATION_FAILED naming the variable, so an assistant can say what
 * to fix.
 */
export interface McpSettings {
  clientId: string | null;
  clientSecret: string | null;
  baseUrl: string;
  audience: string;
  /** IANA zone for dates when a space's own zone is unknown. */
  timezone: string;
  topologyTtlMs: number;
  occupancyTtlMs: number;
  /** Utilisation (%) at and above which a space is `moderate`; below it `quiet`. */
  quietBelowPct: number;
  /** Utilisation (%) at and above which a space is `busy`. */
  busyFromPct: number;
  debug: boolean;
}

export const ENV = {
  clientId: 'SERVICE_CLIENT_ID',
  clientSecret: 'SERVICE_CLIENT_SECRET',
  baseUrl: 'SERVICE_BASE_URL',
  audience: 'SERVICE_AUDIENCE',
  timezone: 'SERVICE_TIMEZONE',
  topologyTtl: 'SERVICE_TOPOLOGY_CACHE_TTL_S',
  occupancyTtl: 'SERVICE_OCCUPANCY_CACHE_TTL_S',
  quiet: 'SERVICE_QUIET_BELOW_PCT',
  busy: 'SERVICE_BUSY_FROM_PCT',
  debug: 'SERVICE_DEBUG',
} as const;

export const DEFAULTS = {
  baseUrl: 'http://127.0.0.1:8080',
  audience: 'https://api.occusim.local',
  timezone: 'UTC',
  topologyTtlS: 600,
  occupancyTtlS: 60,
  quietBelowPct: 30,
  busyFromPct: 70,
} as const;

type Env = Record<string, string | undefined>;

function num(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < min || n > max)
    throw invalid(`${name} must be a number in ${min}..${max}, got ${JSON.stringify(raw)}`);
  return n;
}

const nonEmpty = (x: string | undefined): string | null => (x === undefined || x.trim() === '' ? null : x.trim());

/** Throws VALIDATION_FAILED (a tool error) with the variable's name when a value is malformed. */
export function readSettings(env: Env): McpSettings {
  const baseUrl = (nonEmpty(env[ENV.baseUrl]) ?? DEFAULTS.baseUrl).replace(/\/+$/, '');
  if (!/^https?:\/\/[^/]+/.test(baseUrl))
    throw invalid(`${ENV.baseUrl} must be an http(s) URL, got ${JSON.stringify(baseUrl)}`);
  const timezone = nonEmpty(env[ENV.timezone]) ?? DEFAULTS.timezone;
  if (!isValidZone(timezone))
    throw invalid(`${ENV.timezone} must be an IANA time zone, got ${JSON.stringify(timezone)}`);
  const quietBelowPct = num(env, ENV.quiet, DEFAULTS.quietBelowPct, 0, 1000);
  const busyFromPct = num(env, ENV.busy, DEFAULTS.busyFromPct, 0, 1000);
  if (busyFromPct < quietBelowPct)
    throw invalid(`${ENV.busy} (${busyFromPct}) must not be below ${ENV.quiet} (${quietBelowPct})`);
  return Object.freeze({
    clientId: nonEmpty(env[ENV.clientId]),
    clientSecret: nonEmpty(env[ENV.clientSecret]),
    baseUrl,
    audience: nonEmpty(env[ENV.audience]) ?? DEFAULTS.audience,
    timezone,
    topologyTtlMs: num(env, ENV.topologyTtl, DEFAULTS.topologyTtlS, 0, 86_400) * 1000,
    occupancyTtlMs: num(env, ENV.occupancyTtl, DEFAULTS.occupancyTtlS, 0, 3600) * 1000,
    quietBelowPct,
    busyFromPct,
    debug: /^(1|true|yes|on)$/i.test(env[ENV.debug] ?? ''),
  });
}
