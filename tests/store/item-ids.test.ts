/**
 * AgentTraj item ids: AgentGym's task names by default, so that AgentGym's tooling (AgentEvol's
 * filter picks a task by the id's prefix and fails on one it does not know) reads clade's
 * exports; the table in docs/formats.md says the same as the code.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { BUILTIN_ENV_INFOS } from "../../src/env/infos.js";
import { AGENTGYM_ITEM_PREFIXES, agentTrajItemId } from "../../src/store/export.js";

/** The prefixes AgentEvol's filter_jsonl knows, in its order (it takes the first that matches). */
const AGENTEVOL_PREFIXES = [
  "webshop",
  "alfworld",
  "textcraft",
  "sciworld",
  "sqlgym",
  "lmrlgym_wordle",
  "lmrlgym_maze",
  "weather",
  "movie",
  "todo",
  "babyai",
];

/** AgentEvol's category of an item id: the first known prefix it starts with. */
const category = (itemId: string) => AGENTEVOL_PREFIXES.find((p) => itemId.startsWith(p));

describe("AgentTraj item ids", () => {
  it("use AgentGym's task names by default, clade's names on request", () => {
    expect(agentTrajItemId("maze", 12)).toBe("lmrlgym_maze_12");
    expect(agentTrajItemId("wordle", 0)).toBe("lmrlgym_wordle_0");
    expect(agentTrajItemId("sql", 3)).toBe("sqlgym_3");
    expect(agentTrajItemId("gridworld", 7)).toBe("babyai_7");
    expect(agentTrajItemId("textcraft", 5)).toBe("textcraft_5");
    expect(agentTrajItemId("lmrlgym_maze", 5)).toBe("lmrlgym_maze_5");
    expect(agentTrajItemId("box-codes", 1)).toBe("box-codes_1");
    expect(agentTrajItemId("maze", 12, "clade")).toBe("maze_12");
  });

  it("name a category AgentEvol knows for every built-in env AgentGym has a task for", () => {
    for (const info of BUILTIN_ENV_INFOS) {
      const id = agentTrajItemId(info.name, 42);
      // AgentGym's trainers read the index after the last "_".
      expect(Number(id.split("_").at(-1))).toBe(42);
      if (["coding", "helpdesk", "blade"].includes(info.name)) expect(category(id)).toBeUndefined();
      else expect(category(id), info.name).toBe(id.slice(0, id.lastIndexOf("_")));
    }
    // clade's own ids were what AgentEvol could not place.
    expect(category(agentTrajItemId("maze", 1, "clade"))).toBeUndefined();
  });

  it("are documented in docs/formats.md as the code has them", () => {
    const formats = readFileSync(
      join(import.meta.dirname, "..", "..", "docs", "formats.md"),
      "utf8",
    );
    const table = formats.split("<!-- item-id-prefixes -->")[1]?.split("\n\n")[0] ?? "";
    const rows = table
      .split("\n")
      .map((line) => /^\| `(\w+)`[^|]*\| `(\w+)` \| `(\w+)` \|$/.exec(line))
      .filter((match) => match !== null);
    expect(Object.fromEntries(rows.map((m) => [m[1], m[2]]))).toEqual(AGENTGYM_ITEM_PREFIXES);
    for (const m of rows) expect(m[3]).toBe(m[1]);
  });
});
