/**
 * Patches: a diff applied to its "before" gives exactly its "after" (edge cases, and randomized
 * edits over many seeds), chains rebuild a node, and a patch that does not apply exactly is
 * refused with a PatchError naming the file and the hunk.
 */
import { describe, expect, it } from "vitest";
import { AGENT_API_FILE } from "../../../src/agent/folder/files.js";
import { createRng, type Rng } from "../../../src/env/rng.js";
import {
  applyPatch,
  diffFiles,
  materialise,
  PatchError,
} from "../../../src/improve/selfmod/patch.js";

type Files = ReadonlyMap<string, string>;

const files = (entries: Record<string, string>): Map<string, string> =>
  new Map(Object.entries(entries));

/** The files as a sorted list of entries: what equality of agents means. */
const entries = (map: Files) => [...map].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));

function roundTrip(before: Files, after: Files): string {
  const patch = diffFiles(before, after);
  expect(entries(applyPatch(before, patch))).toEqual(entries(after));
  return patch;
}

describe("diffFiles", () => {
  it("is empty for equal folders", () => {
    const a = files({ "src/a.ts": "x\n", "b.ts": "" });
    expect(diffFiles(a, new Map(a))).toBe("");
  });

  it("writes git-style headers, files in sorted order", () => {
    const before = files({ "z.ts": "1\n", "a.ts": "old\n", "gone.ts": "bye\n" });
    const after = files({ "z.ts": "2\n", "a.ts": "new\n", "new.ts": "hi\n" });
    const patch = diffFiles(before, after);
    const headers = patch.split("\n").filter((line) => /^(diff|---|\+\+\+|new|deleted)/.test(line));
    expect(headers).toEqual([
      "diff --git a/a.ts b/a.ts",
      "--- a/a.ts",
      "+++ b/a.ts",
      "diff --git a/gone.ts b/gone.ts",
      "deleted file mode 100644",
      "--- a/gone.ts",
      "+++ /dev/null",
      "diff --git a/new.ts b/new.ts",
      "new file mode 100644",
      "--- /dev/null",
      "+++ b/new.ts",
      "diff --git a/z.ts b/z.ts",
      "--- a/z.ts",
      "+++ b/z.ts",
    ]);
    roundTrip(before, after);
  });

  it("never includes the agent API file", () => {
    const before = files({ [AGENT_API_FILE]: "declare module 'x' {}\n", "a.ts": "1\n" });
    const after = files({ [AGENT_API_FILE]: "changed\n", "a.ts": "1\n" });
    expect(diffFiles(before, after)).toBe("");
    expect(diffFiles(files({ "a.ts": "1\n" }), after)).toBe("");
    const patch = diffFiles(before, files({ "a.ts": "2\n" }));
    expect(patch).not.toContain(AGENT_API_FILE);
    // Applying it keeps the API file as it was.
    expect(applyPatch(before, patch).get(AGENT_API_FILE)).toBe("declare module 'x' {}\n");
  });
});

describe("round trips", () => {
  it.each([
    ["a line added without a trailing newline", "a\nb\n", "a\nb\nc"],
    ["the trailing newline removed", "a\nb\n", "a\nb"],
    ["the trailing newline added", "a\nb", "a\nb\n"],
    ["the last line changed, no newline either side", "a\nb", "a\nc"],
    ["emptied", "a\nb\n", ""],
    ["filled from empty", "", "a\n"],
    ["filled from empty, no newline", "", "a"],
    ["a single newline", "", "\n"],
    ["blank lines", "\n\n\n", "\n\nx\n\n"],
    ["unicode", "héllo wörld ✓\n日本語\n", "héllo wörld ✗\n日本語\n🙂\n"],
    ["carriage returns kept as they are", "a\r\nb\r\n", "a\r\nc\r\nb\r\n"],
    ["lines that look like diff syntax", "--- a\n+++ b\n@@ x\n", "--- a\n+++ c\n@@ x\n\\ y\n"],
  ])("%s", (_name, before, after) => {
    roundTrip(files({ "f.ts": before }), files({ "f.ts": after }));
  });

  it("adds and removes files, empty ones included", () => {
    const before = files({ "keep.ts": "k\n", "gone.ts": "x\ny\n", "empty-gone.ts": "" });
    const after = files({ "keep.ts": "k\n", "new.ts": "n", "empty-new.ts": "" });
    const patch = roundTrip(before, after);
    expect(patch).toContain("diff --git a/empty-new.ts b/empty-new.ts\nnew file mode 100644\n");
    expect(patch).toContain("diff --git a/empty-gone.ts b/empty-gone.ts\ndeleted file mode");
  });

  it("handles paths with spaces, a trailing one included", () => {
    roundTrip(
      files({ "my dir/a file.ts": "1\n", "tail .ts": "x\n" }),
      files({ "my dir/a file.ts": "2\n", "tail .ts": "y\n", "new dir/b c.ts": "z\n" }),
    );
  });

  it("keeps far-apart changes in separate hunks", () => {
    const lines = Array.from({ length: 40 }, (_, i) => `line ${i}`);
    const changed = [...lines];
    changed[2] = "changed 2";
    changed[30] = "changed 30";
    const patch = roundTrip(
      files({ "f.ts": `${lines.join("\n")}\n` }),
      files({ "f.ts": `${changed.join("\n")}\n` }),
    );
    expect(patch.match(/^@@/gm)).toHaveLength(2);
  });

  it("equals `after` over randomized edits (300 seeds)", () => {
    for (let seed = 0; seed < 300; seed++) {
      const rng = createRng(seed, 0xd1ff);
      const before = randomFiles(rng);
      const after = randomEdit(rng, before);
      roundTrip(before, after);
    }
  });
});

describe("materialise", () => {
  it("applies a chain in order to rebuild each generation", () => {
    const rng = createRng(7);
    const generations: Files[] = [randomFiles(rng)];
    for (let i = 0; i < 8; i++) generations.push(randomEdit(rng, generations.at(-1) as Files));
    const chain = generations.slice(1).map((next, i) => diffFiles(generations[i] as Files, next));
    generations.forEach((generation, i) => {
      expect(entries(materialise(generations[0] as Files, chain.slice(0, i)))).toEqual(
        entries(generation),
      );
    });
  });

  it("says which patch of the chain fails", () => {
    const root = files({ "a.ts": "1\n" });
    const first = diffFiles(root, files({ "a.ts": "2\n" }));
    expect(() => materialise(root, [first, first])).toThrow(/^patch 2 of 2: a\.ts: hunk 1/);
  });
});

describe("conflicts and malformed patches", () => {
  const before = files({ "src/p.ts": "a\nb\nc\nd\ne\n" });
  const patch = diffFiles(before, files({ "src/p.ts": "a\nb\nC\nd\ne\n" }));

  const refusal = (target: Files, text: string): string => {
    try {
      applyPatch(target, text);
    } catch (error) {
      expect(error).toBeInstanceOf(PatchError);
      const message = (error as Error).message;
      expect(message).not.toContain("\n");
      return message;
    }
    throw new Error("the patch applied");
  };

  it("refuses a hunk whose lines differ, naming the file, hunk and line", () => {
    const message = refusal(files({ "src/p.ts": "a\nb\nX\nd\ne\n" }), patch);
    expect(message).toMatch(/^src\/p\.ts: hunk 1 \(@@ -1,5 \+1,5 @@\): line 3 is "X"/);
  });

  it("applies exactly where the header says, never at an offset", () => {
    // The same lines one further down: a fuzzy or searching patcher would apply it there.
    const message = refusal(files({ "src/p.ts": "new\na\nb\nc\nd\ne\n" }), patch);
    expect(message).toMatch(/^src\/p\.ts: hunk 1/);
  });

  it("refuses when the newline at the end of the file differs", () => {
    expect(refusal(files({ "src/p.ts": "a\nb\nc\nd\ne" }), patch)).toMatch(/no newline/);
  });

  it("refuses missing files, files that already exist, and the API file", () => {
    expect(refusal(files({}), patch)).toBe("src/p.ts: no such file");
    const add = diffFiles(files({}), files({ "n.ts": "x\n" }));
    expect(refusal(files({ "n.ts": "y\n" }), add)).toBe("n.ts: added, but exists");
    const api = add.replaceAll("n.ts", AGENT_API_FILE);
    expect(refusal(files({}), api)).toMatch(/agent API file/);
    const outside = add.replaceAll("n.ts", "../n.ts");
    expect(refusal(files({}), outside)).toMatch(/not an acceptable file path/);
  });

  it("refuses malformed patches", () => {
    const wrongCount = patch.replace("@@ -1,5 +1,5 @@", "@@ -1,6 +1,5 @@");
    expect(refusal(before, wrongCount)).toMatch(/^malformed patch: /);
    expect(refusal(before, "this is not a patch\n")).toMatch(/^malformed patch: /);
    expect(refusal(before, patch.replace("--- a/src/p.ts", "--- src/p.ts"))).toMatch(
      /^malformed patch: /,
    );
  });

  it("treats an empty patch as no change", () => {
    expect(entries(applyPatch(before, ""))).toEqual(entries(before));
  });
});

// Random folders and edits ---------------------------------------------------------------

const WORDS = ["a", "b", "const x = 1;", "", "  }", "ü ✓", "{", "--- a", "+x", " ", "\\ y", "日本"];

function randomText(rng: Rng): string {
  const n = rng.int(12);
  const lines = Array.from({ length: n }, () => rng.pick(WORDS));
  const text = lines.join("\n");
  return n > 0 && rng.next() < 0.7 ? `${text}\n` : text;
}

function randomFiles(rng: Rng): Map<string, string> {
  const result = new Map<string, string>();
  const count = 1 + rng.int(5);
  for (let i = 0; i < count; i++) result.set(randomPath(rng), randomText(rng));
  return result;
}

function randomPath(rng: Rng): string {
  const dir = rng.pick(["src/", "test/", "my dir/", ""]);
  return `${dir}${rng.pick(["f", "g h"])}${rng.int(20)}.ts`;
}

/** Line edits (insert, delete, replace), newline-at-end flips, files added and removed. */
function randomEdit(rng: Rng, before: Files): Map<string, string> {
  const after = new Map(before);
  for (const [path, text] of before) {
    const roll = rng.next();
    if (roll < 0.15) {
      after.delete(path);
      continue;
    }
    if (roll < 0.35) continue;
    const lines = text.split("\n");
    const edits = 1 + rng.int(4);
    for (let e = 0; e < edits; e++) {
      const at = rng.int(lines.length + 1);
      const kind = rng.int(3);
      if (kind === 0) lines.splice(at, 0, rng.pick(WORDS));
      else if (kind === 1) lines.splice(at, 1);
      else lines.splice(at, 1, rng.pick(WORDS));
    }
    after.set(path, lines.join("\n"));
  }
  if (rng.next() < 0.4) after.set(randomPath(rng), randomText(rng));
  return after;
}
