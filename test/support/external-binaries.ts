import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';
import { describe } from 'vitest';

/**
 * Tests that need a program outside npm (Debian's mosquitto, PostgreSQL, Chromium) run when
 * it is on PATH. On a developer's machine without it they are skipped with the reason printed
 * (`npm test` passes after `npm install` alone); under CI (`CI=true`, where .ci/run installs
 * the packages) a missing program fails the file instead, so CI never passes by skipping.
 */
export interface ExternalBinary {
  /** The program's name as looked up on PATH, e.g. `mosquitto_pub`. */
  readonly name: string;
  /** Absolute path of the program, or null when it is not on PATH. */
  readonly path: string | null;
  /** Why the tests that need it are skipped (null when it is present). */
  readonly skipReason: string | null;
}

/** Which Debian package provides each program the tests use (the README's list). */
export const DEBIAN_PACKAGES: Readonly<Record<string, string>> = {
  mosquitto: 'mosquitto',
  mosquitto_pub: 'mosquitto-clients',
  mosquitto_sub: 'mosquitto-clients',
  postgres: 'postgresql',
  initdb: 'postgresql',
  chromium: 'chromium',
  promtool: 'prometheus',
  protoc: 'protobuf-compiler',
  python3: 'python3',
};

/** Looks `name` up on PATH (only PATH: what a test would spawn is what it finds). */
export function findBinary(name: string, path: string = process.env.PATH ?? ''): string | null {
  for (const dir of path.split(delimiter)) {
    if (dir === '') continue;
    const candidate = join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here; next PATH entry
    }
  }
  return null;
}

/** True when the environment says it is CI (`CI=true` or `CI=1`, as CI services set it). */
export function underCi(env: NodeJS.ProcessEnv = process.env): boolean {
  return env.CI === 'true' || env.CI === '1';
}

/**
 * The programs a test file needs: present, or a skip reason that is printed once; absent under
 * CI, an error thrown while the file is collected (the file fails, naming the package).
 */
export function requireBinaries(...names: string[]): ExternalBinary[] {
  return names.map((name) => {
    const path = findBinary(name);
    if (path !== null) return { name, path, skipReason: null };
    const pkg = DEBIAN_PACKAGES[name] ?? name;
    const reason = `${name} is not on PATH (Debian package ${pkg}: apt-get install ${pkg})`;
    if (underCi()) throw new Error(`CI=true but ${reason}; .ci/run installs it`);
    return { name, path: null, skipReason: reason };
  });
}

/**
 * `describe` that runs when every program in `names` is on PATH, and otherwise is skipped
 * with the reason in its title and on stderr (so `npm test` says what it did not run).
 */
export function describeWithBinaries(
  names: readonly string[],
  title: string,
  body: (bins: Record<string, string>) => void,
): void {
  const bins = requireBinaries(...names);
  const missing = bins.filter((b) => b.path === null);
  if (missing.length > 0) {
    const reason = missing.map((b) => b.skipReason).join('; ');
    process.stderr.write(`skipped: ${title} — ${reason}\n`);
    describe.skip(`${title} (skipped: ${reason})`, () => body({}));
    return;
  }
  describe(title, () => body(Object.fromEntries(bins.map((b) => [b.name, b.path as string]))));
}
