/**
 * The library examples run as written: every ```ts block of README.md's "Library" section and of
 * docs/library.md is saved to a file and imported, with `from "clade"` pointed at src/index.ts
 * (the one change made to them). The LLM example reads LLM_BASE_URL, which points here at the fake
 * model server. Each example must type-check as strictly as the source, finish without throwing
 * and print something.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import ts from "typescript";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { type FakeModelServer, startFakeModelServer } from "../../src/testing/index.js";

const ROOT = resolve(fileURLToPath(new URL(".", import.meta.url)), "../..");
const INDEX = join(ROOT, "src", "index.js");

/** The ```ts blocks of a Markdown text, in order. */
function tsBlocks(markdown: string): string[] {
  return [...markdown.matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map((m) => m[1] as string);
}

/** The text of a `## heading` section, up to the next `## ` heading. */
function section(markdown: string, heading: string): string {
  const start = markdown.indexOf(`\n## ${heading}\n`);
  if (start < 0) throw new Error(`no "## ${heading}" section`);
  const end = markdown.indexOf("\n## ", start + 1);
  return markdown.slice(start, end < 0 ? undefined : end);
}

const readme = readFileSync(join(ROOT, "README.md"), "utf8");
const library = readFileSync(join(ROOT, "docs", "library.md"), "utf8");
const examples = [
  ...tsBlocks(section(readme, "Library")).map((code, i) => ({ name: `README #${i + 1}`, code })),
  ...tsBlocks(library).map((code, i) => ({ name: `docs/library.md #${i + 1}`, code })),
];

/** Where an example is saved: `from "clade"` becomes the source tree's index. */
function save(name: string, code: string): string {
  const file = join(dir, `${name.replace(/\W+/g, "-")}.mts`);
  // `export {}` makes each file a module of its own (top-level await, no shared names).
  const source = code.replaceAll('from "clade"', `from ${JSON.stringify(INDEX)}`);
  writeFileSync(file, `export {};\n${source}`);
  return file;
}

let server: FakeModelServer;
let dir: string;
const savedBaseUrl = process.env.LLM_BASE_URL;

beforeAll(async () => {
  server = await startFakeModelServer({
    rule: () => ({ content: "Thought: I go up.\nAction: move up" }),
  });
  process.env.LLM_BASE_URL = server.openaiBaseUrl;
  dir = mkdtempSync(join(tmpdir(), "clade-docs-"));
});

afterAll(async () => {
  if (savedBaseUrl === undefined) delete process.env.LLM_BASE_URL;
  else process.env.LLM_BASE_URL = savedBaseUrl;
  await server?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("library examples", () => {
  it("finds them: one in the README, six in docs/library.md", () => {
    expect(examples.map((e) => e.name)).toEqual([
      "README #1",
      "docs/library.md #1",
      "docs/library.md #2",
      "docs/library.md #3",
      "docs/library.md #4",
      "docs/library.md #5",
      "docs/library.md #6",
    ]);
    for (const { code } of examples) expect(code).toMatch(/from "clade";/);
  });

  it("type-check under the project's compiler options", () => {
    const files = examples.map(({ name, code }) => save(name, code));
    const config = ts.readConfigFile(join(ROOT, "tsconfig.json"), ts.sys.readFile);
    const { options } = ts.parseJsonConfigFileContent(config.config, ts.sys, ROOT);
    const program = ts.createProgram(files, {
      ...options,
      noEmit: true,
      typeRoots: [join(ROOT, "node_modules", "@types")],
    });
    const problems = ts
      .getPreEmitDiagnostics(program)
      .filter((d) => d.file && files.includes(d.file.fileName))
      .map((d) => {
        const at = d.file?.getLineAndCharacterOfPosition(d.start ?? 0);
        const text = ts.flattenDiagnosticMessageText(d.messageText, "\n");
        return `${d.file?.fileName}:${(at?.line ?? 0) + 1}: ${text}`;
      });
    expect(problems).toEqual([]);
  }, 120_000);

  it.each(examples)("$name runs", async ({ name, code }) => {
    const file = save(name, code);
    const printed: string[] = [];
    const log = vi.spyOn(console, "log").mockImplementation((...args: unknown[]) => {
      printed.push(args.map(String).join(" "));
    });
    const requestsBefore = server.requests.length;
    try {
      await import(pathToFileURL(file).href);
    } finally {
      log.mockRestore();
    }
    expect(printed.length).toBeGreaterThan(0);
    expect(printed.join("\n")).not.toMatch(/NaN|undefined/);
    if (code.includes("createLlmAgent")) {
      // The LLM example really talked to the (fake) server.
      expect(server.requests.length).toBeGreaterThan(requestsBefore);
      expect(server.unexpectedRequests).toHaveLength(0);
    }
  });
});
