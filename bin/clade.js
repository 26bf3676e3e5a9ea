#!/usr/bin/env node
import { main } from "../dist/cli/main.js";

// A reader that closes early (`clade export RUN | head`) is not an error worth a stack trace.
process.stdout.on("error", (error) => {
  if (error.code === "EPIPE") process.exit(process.exitCode ?? 0);
  throw error;
});

process.exitCode = await main(process.argv.slice(2));
