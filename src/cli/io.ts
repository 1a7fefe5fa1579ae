/** What a command needs from the process: streams, so commands are testable in-process. */
export interface Io {
  stdout: NodeJS.WritableStream & { isTTY?: boolean };
  stderr: NodeJS.WriteStream;
}

/** Parsed command-line flags, by long name. */
export type Flags = Record<string, string | string[] | boolean | undefined>;
