/**
 * Builds clade view's web app (src/web/app) into dist/web/public with esbuild: one classic
 * script (IIFE, so a static bundle opens from file://, where module scripts are refused), one
 * stylesheet and the page. Run by `npm run build`; takes well under a second.
 */
import { copyFileSync, mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import * as esbuild from "esbuild";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const out = join(root, "dist", "web", "public");
mkdirSync(out, { recursive: true });
await esbuild.build({
  // main.ts imports the stylesheets, so esbuild writes app.css beside app.js.
  entryPoints: { app: join(root, "src/web/app/main.ts") },
  outdir: out,
  bundle: true,
  minify: true,
  format: "iife",
  target: "es2022",
  platform: "browser",
  legalComments: "linked",
  logLevel: "warning",
});
copyFileSync(join(root, "src/web/app/index.html"), join(out, "index.html"));
