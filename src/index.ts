/**
 * occusim library API: run scenarios from your own code and tests.
 *
 * @example
 * import { runScenario } from 'occusim';
 * const report = await runScenario('quickstart', { seed: 7, expect: ['rooms.mae<1'] });
 */
export { runScenario, type RunReport, type RunPerf } from './run/run-scenario.js';
export type { RunOptions } from './run/options.js';
export type { RunResult, SpaceAccuracy, TrafficAccuracy } from './run/report.js';
export {
  loadScenarioFile,
  loadScenarioText,
  loadScenarioObject,
  type LoadResult,
  type LoadOverrides,
} from './scenario/load.js';
export { formatDiagnostic, type Diagnostic } from './scenario/diagnostics.js';
export { scenarioJsonSchema } from './scenario/schema.js';
export { builtInScenarios } from './scenario/built-in.js';
export {
  EXPECT_METRICS,
  parseExpectation,
  type Expectation,
  type ExpectMetric,
  type ExpectOperator,
} from './scenario/expectations.js';
export { evaluateExpectations, type Verdict } from './run/expectations.js';
export type * from './scenario/model.js';
export { AppError, ErrorCodes, type ErrorCode } from './core/errors.js';
export { VirtualClock, ScaledWallClock, type Clock } from './core/clock.js';
export { rngFor, type Rng } from './core/rng.js';
export { startPlatform, type Platform } from './platform/platform.js';
export {
  platformConfig,
  type PlatformConfig,
  type PlatformConfigInput,
  type PlatformLocals,
} from './platform/config.js';
export { startPlatformThread } from './platform/thread.js';
export type { PlatformReads, ReportRequest, ReportData } from './platform/reads.js';
export type { StorePolicy } from './store/guard.js';
export { parseStoreLocation, type StoreLocation } from './store/location.js';
export { AssetCatalogue, type CatalogueChange } from './assets/catalogue.js';
export { assetsFromScenario, catalogueFromScenario, organisationsFromScenario } from './assets/from-scenario.js';
export type {
  Organisation,
  OrganisationAssets,
  Site,
  Building,
  Floor,
  Room,
  Zone,
  Door,
  Hive,
  Sensor,
  Tag,
  User,
  Client,
  AssetKind,
  AssetSnapshot,
} from './assets/model.js';
