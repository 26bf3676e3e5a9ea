/**
 * The web app runs in a browser: it may take only types from the server's modules (a value
 * import would bundle Node code into the page), values from the pure address module, and its
 * own bundled libraries. And nothing below the viewer imports it.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "..", "..");
const APP = join(ROOT, "src", "web", "app");
const BROWSER_PACKAGES = ["preact", "preact/hooks", "htm", "uplot", "d3-hierarchy"];

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? files(join(dir, entry.name))
      : entry.name.endsWith(".ts")
        ? [join(dir, entry.name)]
        : [],
  );
}

/** Each import of a module: whether it is type-only, and from where. */
function imports(file: string): { typeOnly: boolean; from: string }[] {
  const text = readFileSync(file, "utf8");
  return [...text.matchAll(/^import\s+(type\s+)?[^;]*?from\s+"([^"]+)";/gms)]
    .map((m) => ({
      typeOnly: m[1] !== undefined,
      from: m[2] as string,
    }))
    .concat(
      [...text.matchAll(/^import\s+"([^"]+)";/gm)].map((m) => ({
        typeOnly: false,
        from: m[1] as string,
      })),
    );
}

describe("the web app's imports", () => {
  it("take only types from the server, and only browser libraries", () => {
    const wrong: string[] = [];
    for (const file of files(APP)) {
      for (const { typeOnly, from } of imports(file)) {
        if (from.endsWith(".css")) continue;
        if (!from.startsWith(".")) {
          if (!BROWSER_PACKAGES.includes(from)) wrong.push(`${relative(ROOT, file)}: ${from}`);
          continue;
        }
        const target = relative(APP, join(file, "..", from));
        const inApp = !target.startsWith("..");
        if (inApp || typeOnly || target === "../api-path.js") continue;
        wrong.push(`${relative(ROOT, file)}: ${from} (a value import from outside the app)`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it("the server takes nothing from the CLI above it", () => {
    const server = files(join(ROOT, "src", "web")).filter((file) => !file.startsWith(APP));
    const users = server.filter((file) =>
      imports(file).some(({ from }) => /(^|\/)cli\//.test(from)),
    );
    expect(users.map((file) => relative(ROOT, file))).toEqual([]);
  });

  it("are imported by nothing below the viewer", () => {
    const below = files(join(ROOT, "src")).filter(
      (file) => !file.includes(`${join("src", "web")}`) && !file.includes(join("src", "cli")),
    );
    const users = below.filter((file) =>
      imports(file).some(({ from }) => /(^|\/)web\//.test(from)),
    );
    expect(users.map((file) => relative(ROOT, file))).toEqual([]);
  });
});
