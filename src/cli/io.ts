/** Where the CLI writes, injectable so commands can be tested in-process. */
export interface CliIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  /** Whether stderr is an interactive terminal (progress bars only then). */
  interactive: boolean;
}

export const processIo: CliIo = {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  interactive: Boolean(process.stderr.isTTY),
};

/** Bad input from the user: one line on stderr and exit code 2. */
export class UsageError extends Error {
  override name = "UsageError";
}
