/** `clade init-agent DIR`: writes the starting agent folder, refuses a folder in use. */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { AGENT_API_FILE, agentManifest, readAgentFolder } from "../../src/agent/folder/files.js";
import { agentApiDeclarations, agentTemplate } from "../../src/agent/folder/template.js";
import { runCli } from "../fixtures/cli.js";

const root = mkdtempSync(join(tmpdir(), "clade-init-agent-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe("clade init-agent", () => {
  it("writes the template, named after the folder, and says what to run next", async () => {
    const dir = join(root, "my-agent");
    const result = await runCli("init-agent", dir);
    expect(result).toMatchObject({ code: 0, stderr: "" });
    const files = readAgentFolder(dir);
    expect(files).toEqual(agentTemplate("my-agent"));
    expect(agentManifest(files)).toMatchObject({ name: "my-agent", entry: "src/agent.ts" });
    expect(files.get(AGENT_API_FILE)).toBe(agentApiDeclarations());
    expect(result.stdout).toContain(`Wrote the agent "my-agent" (a ReAct agent) into ${dir}:\n`);
    for (const path of files.keys()) expect(result.stdout).toContain(`\n  ${path}\n`);
    expect(result.stdout).toContain(`clade eval --agent ${dir} --env maze --model <spec>`);
  });

  it("takes --name, and keeps the template's name for a folder name it cannot use", async () => {
    const named = join(root, "named");
    expect((await runCli("init-agent", named, "--name", "solver.v2")).code).toBe(0);
    expect(agentManifest(readAgentFolder(named)).name).toBe("solver.v2");
    const odd = join(root, "odd name!");
    expect((await runCli("init-agent", odd)).code).toBe(0);
    expect(agentManifest(readAgentFolder(odd)).name).toBe("react-agent");
  });

  it("prints clade.init-agent/1 with --json", async () => {
    const dir = join(root, "json-agent");
    const result = await runCli("init-agent", dir, "--json");
    expect(result.code).toBe(0);
    const out = JSON.parse(result.stdout);
    expect(out).toEqual({
      schema: "clade.init-agent/1",
      dir,
      name: "json-agent",
      entry: "src/agent.ts",
      files: [...agentTemplate().keys()],
      next: [
        `clade eval --agent ${dir} --env maze --model <spec>`,
        `clade evolve --agent ${dir} --env maze --model <spec> --modify-model <spec> --run-id <id>`,
      ],
    });
  });

  it("refuses a folder that is not empty, a file, and a bad name, in one line (exit 2)", async () => {
    const full = join(root, "full");
    mkdirSync(full);
    writeFileSync(join(full, "notes.txt"), "mine");
    const refused = await runCli("init-agent", full);
    expect(refused).toEqual({
      code: 2,
      stdout: "",
      stderr: `clade: error: ${full} is not empty; choose a new folder for the agent\n`,
    });
    expect(readdirSync(full)).toEqual(["notes.txt"]);

    const file = join(root, "a-file");
    writeFileSync(file, "mine");
    const onFile = await runCli("init-agent", file, "--json");
    expect(onFile.code).toBe(2);
    expect(JSON.parse(onFile.stderr).error).toMatchObject({ kind: "usage", name: "UsageError" });
    expect(readFileSync(file, "utf8")).toBe("mine");

    const badName = await runCli("init-agent", join(root, "x"), "--name", "-x");
    expect(badName.code).toBe(2);
    expect(badName.stderr).toMatch(/^clade: error: --name: use 1-60 letters/);
    expect(readdirSync(root)).not.toContain("x");
  });
});
