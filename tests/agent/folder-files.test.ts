/**
 * Agent folders as data (src/agent/folder/files.ts): what is read (and refused) from an
 * untrusted folder, the hash that identifies an agent, writing a folder all or nothing, and
 * manifest errors that name the field.
 */
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  AGENT_API_FILE,
  AGENT_MANIFEST,
  AgentFolderError,
  agentFilesHash,
  agentManifest,
  checkAgentFiles,
  isAgentPath,
  MAX_AGENT_FILE_BYTES,
  MAX_AGENT_FILES,
  readAgentFolder,
  writeAgentFolder,
} from "../../src/agent/folder/files.js";
import { agentApiDeclarations, agentTemplate, withAgentApi } from "../../src/agent/folder/index.js";

const dirs: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "clade-agent-files-"));
  dirs.push(dir);
  return dir;
}
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** A folder holding these files (relative path → text or bytes). */
function folder(files: Record<string, string | Buffer>): string {
  const dir = tempDir();
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), content);
  }
  return dir;
}

const MANIFEST = JSON.stringify({
  format: "clade.agent/1",
  name: "a",
  entry: "src/agent.ts",
  tests: ["test/a.test.ts"],
});
const BASIC = {
  [AGENT_MANIFEST]: MANIFEST,
  "src/agent.ts": "export default { create() { return {}; } };\n",
  "test/a.test.ts": "",
};

describe("reading an agent folder", () => {
  it("reads text files, sorted, and skips node_modules, .git, dist and coverage", () => {
    const dir = folder({
      ...BASIC,
      "node_modules/x/index.js": "x",
      ".git/HEAD": "ref",
      "dist/agent.js": "x",
      "coverage/lcov.info": "x",
      "src/deep/more.ts": "é ü 🙂",
    });
    const files = readAgentFolder(dir);
    expect([...files.keys()]).toEqual([
      AGENT_MANIFEST,
      "src/agent.ts",
      "src/deep/more.ts",
      "test/a.test.ts",
    ]);
    expect(files.get("src/deep/more.ts")).toBe("é ü 🙂");
  });

  it("refuses a symbolic link, even to a file inside", () => {
    const dir = folder(BASIC);
    symlinkSync(join(dir, "src/agent.ts"), join(dir, "src/link.ts"));
    expect(() => readAgentFolder(dir)).toThrow(
      new AgentFolderError("src/link.ts in the agent folder is not a regular file or folder"),
    );
  });

  it("refuses binary files and invalid UTF-8", () => {
    expect(() => readAgentFolder(folder({ ...BASIC, "bin.dat": Buffer.from([1, 0, 2]) }))).toThrow(
      /bin\.dat is not UTF-8 text/,
    );
    expect(() => readAgentFolder(folder({ ...BASIC, "x.txt": Buffer.from([0xff, 0xfe]) }))).toThrow(
      /x\.txt is not UTF-8 text/,
    );
  });

  it("refuses too many files, a file too big, and too many bytes in all", () => {
    const many: Record<string, string> = {};
    for (let i = 0; i <= MAX_AGENT_FILES; i++) many[`f${i}.ts`] = "";
    expect(() => readAgentFolder(folder(many))).toThrow(/at most 200 files/);
    const big = folder({ "big.ts": "x".repeat(MAX_AGENT_FILE_BYTES + 1) });
    expect(() => readAgentFolder(big)).toThrow(/big\.ts is larger than 262144 bytes/);
    const heavy: Record<string, string> = {};
    for (let i = 0; i < 9; i++) heavy[`h${i}.ts`] = "x".repeat(250 * 1024);
    expect(() => readAgentFolder(folder(heavy))).toThrow(/add up to more than/);
  });

  it("refuses file names it cannot carry, and a folder that is not there", () => {
    expect(() => readAgentFolder(folder({ "what?.ts": "" }))).toThrow(
      /not an acceptable file path: what\?\.ts/,
    );
    expect(() => readAgentFolder(join(tempDir(), "missing"))).toThrow(/does not exist/);
    const file = join(tempDir(), "file");
    writeFileSync(file, "");
    expect(() => readAgentFolder(file)).toThrow(/is not a folder/);
  });

  it("accepts only relative paths without . or .. parts", () => {
    for (const good of ["a.ts", "src/a.ts", "test/a b.test.ts", ".clade-harness.mjs"]) {
      expect(isAgentPath(good), good).toBe(true);
    }
    for (const bad of ["", "/etc/passwd", "../x.ts", "a/../../x", "./a.ts", "a//b", "a/", "a\\b"]) {
      expect(isAgentPath(bad), bad).toBe(false);
      expect(() => checkAgentFiles(new Map([[bad, ""]])), bad).toThrow(AgentFolderError);
    }
  });
});

describe("an agent's identity", () => {
  it("is the same for the same files in any order, and changes with any byte or name", () => {
    const a = new Map([
      ["x.ts", "one"],
      ["y.ts", "two"],
    ]);
    const b = new Map([
      ["y.ts", "two"],
      ["x.ts", "one"],
    ]);
    const hash = agentFilesHash(a);
    expect(hash).toMatch(/^[0-9a-f]{64}$/);
    expect(agentFilesHash(b)).toBe(hash);
    expect(agentFilesHash(new Map([...a, ["y.ts", "two "]]))).not.toBe(hash);
    expect(agentFilesHash(new Map([...a, ["z.ts", ""]]))).not.toBe(hash);
    // Bytes cannot move between a name and its text unnoticed.
    expect(agentFilesHash(new Map([["ab", "c"]]))).not.toBe(agentFilesHash(new Map([["a", "bc"]])));
  });
});

describe("writing an agent folder", () => {
  it("writes the files, which read back the same", () => {
    const target = join(tempDir(), "agent");
    const files = agentTemplate();
    writeAgentFolder(target, files);
    expect(readAgentFolder(target)).toEqual(files);
    expect(agentFilesHash(readAgentFolder(target))).toBe(agentFilesHash(files));
  });

  it("writes into an existing empty folder", () => {
    const target = tempDir();
    writeAgentFolder(target, new Map([["a.ts", "a"]]));
    expect(readFileSync(join(target, "a.ts"), "utf8")).toBe("a");
  });

  it("refuses a folder that is not empty, and a file, leaving them as they were", () => {
    const full = folder({ "mine.txt": "keep me" });
    expect(() => writeAgentFolder(full, new Map([["a.ts", "a"]]))).toThrow(
      new AgentFolderError(`${full} is not empty; choose a new folder for the agent`),
    );
    expect(readdirSync(full)).toEqual(["mine.txt"]);
    const file = join(tempDir(), "file");
    writeFileSync(file, "keep me too");
    expect(() => writeAgentFolder(file, new Map([["a.ts", "a"]]))).toThrow(
      /is not a readable folder/,
    );
    expect(readFileSync(file, "utf8")).toBe("keep me too");
  });

  it("leaves nothing behind when a write fails half-way", () => {
    const parent = tempDir();
    const target = join(parent, "agent");
    // "a" is a file, so "a/b" cannot be written after it.
    const files = new Map([
      ["a", "first"],
      ["a/b", "second"],
    ]);
    expect(() => writeAgentFolder(target, files)).toThrow();
    expect(readdirSync(parent)).toEqual([]);
  });

  it("refuses files it could not read back", () => {
    const target = join(tempDir(), "agent");
    expect(() => writeAgentFolder(target, new Map([["../escape.ts", ""]]))).toThrow(
      /not an acceptable file path/,
    );
    expect(existsSync(target)).toBe(false);
  });
});

describe("the manifest", () => {
  const withManifest = (manifest: unknown) =>
    new Map([
      [AGENT_MANIFEST, typeof manifest === "string" ? manifest : JSON.stringify(manifest)],
      ["src/agent.ts", ""],
    ]);
  const good = { format: "clade.agent/1", name: "a", entry: "src/agent.ts" };

  it("is read with its defaults", () => {
    expect(agentManifest(withManifest(good))).toEqual({ ...good, tests: [] });
  });

  it("errors name the field", () => {
    const cases: [unknown, RegExp][] = [
      [
        { ...good, format: "clade.agent/2" },
        /^clade-agent\.json: format: must be "clade\.agent\/1"$/,
      ],
      [{ ...good, name: "-x" }, /^clade-agent\.json: name: /],
      [{ ...good, name: 3 }, /^clade-agent\.json: name: must be a string$/],
      [{ ...good, entry: "src/agent.py" }, /^clade-agent\.json: entry: must be a \.ts/],
      [{ ...good, tests: "t.ts" }, /^clade-agent\.json: tests: /],
      [{ ...good, extra: 1 }, /^clade-agent\.json: \(top level\): /],
      [{ ...good, entry: "src/other.ts" }, /names src\/other\.ts: no such file/],
      [{ ...good, tests: ["test/none.ts"] }, /names test\/none\.ts: no such file/],
      ["{not json", /^clade-agent\.json is not JSON/],
    ];
    for (const [manifest, message] of cases) {
      expect(() => agentManifest(withManifest(manifest)), String(message)).toThrow(message);
    }
    expect(() => agentManifest(new Map())).toThrow(/no clade-agent\.json in the agent folder/);
  });
});

describe("the template and the API declarations", () => {
  it("the template is a valid agent whose API file is clade's", () => {
    const files = agentTemplate();
    expect(agentManifest(files)).toMatchObject({ name: "react-agent", entry: "src/agent.ts" });
    expect(files.get(AGENT_API_FILE)).toBe(agentApiDeclarations());
    expect(agentApiDeclarations()).toContain('declare module "clade-agent"');
    expect(agentManifest(agentTemplate("mine")).name).toBe("mine");
    expect(() => agentTemplate("bad name")).toThrow(/clade-agent\.json: name: /);
  });

  it("withAgentApi writes clade's declarations over the folder's own, in a copy", () => {
    const files = new Map([
      [AGENT_API_FILE, "declare module 'clade-agent' { export type Anything = any; }"],
      ["a.ts", ""],
    ]);
    const checked = withAgentApi(files);
    expect(checked.get(AGENT_API_FILE)).toBe(agentApiDeclarations());
    expect([...checked.keys()]).toEqual(["a.ts", AGENT_API_FILE]);
    expect(files.get(AGENT_API_FILE)).toContain("Anything");
  });
});
