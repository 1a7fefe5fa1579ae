import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

/**
 * Debian's Chromium for the browser tests (installed by .ci/run), driven by playwright-core
 * with the system executable (no browser download). `CHROMIUM_PATH` overrides the path.
 * Absent outside CI: the tests skip and say why; absent under CI=true: they fail.
 */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const HAVE_CHROMIUM = existsSync(CHROMIUM_PATH);

if (!HAVE_CHROMIUM) {
  if (process.env.CI === 'true')
    throw new Error(`Chromium not found at ${CHROMIUM_PATH} under CI=true: .ci/run installs Debian's chromium`);
  console.warn(
    `skipping browser tests: no Chromium at ${CHROMIUM_PATH} (apt-get install chromium, or set CHROMIUM_PATH)`,
  );
}

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--font-render-hinting=none', '--force-color-profile=srgb'],
  });
}
