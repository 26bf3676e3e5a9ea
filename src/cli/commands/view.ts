/** `clade view`: the web viewer over the store, or a static copy of chosen runs (--bundle). */
import { z } from "zod";
import { StoreError } from "../../store/errors.js";
import { isLoopbackHost } from "../../web/auth.js";
import { writeBundle } from "../../web/bundle.js";
import { startViewServer } from "../../web/server.js";
import { type CliIo, startupUsageError, UsageError, untilStopped } from "../io.js";
import { integerOption, parseOptions } from "../options.js";

const viewOptionsSchema = z.object({
  db: z.string().min(1, "must not be empty"),
  host: z.string().min(1, "must not be empty"),
  port: integerOption(0, 65_535),
  token: z
    .string()
    .regex(/^[A-Za-z0-9._~-]{16,200}$/, "must be 16-200 letters, digits, '.', '_', '~' or '-'")
    .optional(),
  bundle: z.string().min(1, "must not be empty").optional(),
  run: z.array(z.string().min(1)).default([]),
  json: z.boolean().optional(),
});

export async function viewCommand(
  raw: z.input<typeof viewOptionsSchema>,
  io: CliIo,
): Promise<number> {
  const options = parseOptions(viewOptionsSchema, raw);
  if (options.bundle !== undefined) {
    const written = await writeBundle({ db: options.db, dir: options.bundle, ids: options.run });
    if (options.json) io.stdout(`${JSON.stringify({ schema: "clade.bundle/1", ...written })}\n`);
    else {
      io.stdout(
        `wrote ${written.files} files (${written.items.length} item${written.items.length === 1 ? "" : "s"}) ` +
          `to ${written.dir}: open ${written.index}\n`,
      );
    }
    return 0;
  }
  if (options.run.length > 0)
    throw new UsageError("--run chooses what --bundle writes; give --bundle DIR");
  let server: Awaited<ReturnType<typeof startViewServer>>;
  try {
    server = await startViewServer({
      db: options.db,
      host: options.host,
      port: options.port,
      ...(options.token === undefined ? {} : { token: options.token }),
    });
  } catch (error) {
    if (error instanceof StoreError) throw error;
    throw startupUsageError(error);
  }
  if (isLoopbackHost(options.host)) {
    io.stderr(`clade view: ${server.url} (store ${options.db}); Ctrl-C stops\n`);
    io.stdout(`${server.url}\n`);
  } else {
    io.stderr(
      `clade view: listening on ${options.host}, not loopback: every request needs the token\n` +
        `  open ${server.urlWithToken}\n`,
    );
    io.stdout(`${server.urlWithToken}\n`);
  }
  await untilStopped();
  await server.close();
  return 0;
}
