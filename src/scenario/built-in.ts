import { existsSync, readdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The scenarios shipped in the package's `scenarios/` folder, by name (`quickstart` is
 * `scenarios/quickstart.yaml`), so `runScenario('quickstart')` and `occusim run quickstart`
 * work from any directory, including a project that installed the package.
 */
const BUILT_IN_DIR = fileURLToPath(new URL('../../scenarios/', import.meta.url));
const NAME = /^[a-z0-9][a-z0-9-]*$/;

/** The names of the shipped scenarios, sorted. */
export function builtInScenarios(): string[] {
  try {
    return readdirSync(BUILT_IN_DIR)
      .filter((f) => f.endsWith('.yaml'))
      .map((f) => f.slice(0, -'.yaml'.length))
      .sort();
  } catch {
    return [];
  }
}

/**
 * The file a scenario argument names: the path as given (relative to the caller's working
 * directory) when such a file exists or it does not look like a bare name; else the shipped
 * scenario of that name. An unknown bare name stays as given, so it is reported as not found.
 */
export function scenarioFileOf(nameOrPath: string): string {
  if (!NAME.test(nameOrPath) || existsSync(nameOrPath)) return nameOrPath;
  const shipped = resolve(BUILT_IN_DIR, `${nameOrPath}.yaml`);
  return existsSync(shipped) ? shipped : nameOrPath;
}
