import { accessSync, constants, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { AppError, ErrorCodes } from '../core/errors.js';
import type { Flags } from './io.js';

/**
 * What can be checked before a long run starts is checked here, so a typo in `--report` does
 * not cost an office day of simulation: every output file's directory exists and is writable.
 */
export function checkOutputFiles(flags: Flags, names: readonly string[]): void {
  for (const name of names) {
    const file = flags[name];
    if (typeof file === 'string') checkWritableFile(`--${name}`, file);
  }
}

export function checkWritableFile(what: string, file: string): void {
  if (file === '') throw new AppError(ErrorCodes.USAGE, `${what} needs a file name`);
  const path = resolve(file);
  const dir = dirname(path);
  let isDir = false;
  try {
    isDir = statSync(dir).isDirectory();
  } catch {
    throw new AppError(ErrorCodes.USAGE, `${what} ${file}: the directory ${dir} does not exist`);
  }
  if (!isDir) throw new AppError(ErrorCodes.USAGE, `${what} ${file}: ${dir} is not a directory`);
  try {
    if (statSync(path).isDirectory()) throw new AppError(ErrorCodes.USAGE, `${what} ${file}: is a directory`);
  } catch (err) {
    if (err instanceof AppError) throw err; // otherwise the file does not exist yet: fine
  }
  try {
    accessSync(dir, constants.W_OK);
  } catch {
    throw new AppError(ErrorCodes.USAGE, `${what} ${file}: the directory ${dir} is not writable`);
  }
}
