/**
 * What clade ships for agent folders in its `data/` folder: the agent API's declarations
 * (`clade-agent.d.ts`, written into every folder clade checks or runs) and the starting agent
 * that `clade init-agent` writes.
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import {
  AGENT_API_FILE,
  AGENT_MANIFEST,
  type AgentFiles,
  agentManifest,
  readAgentFolder,
  sortedFiles,
} from "./files.js";

// src/agent/folder/x.ts and dist/agent/folder/x.js are both three levels below the package.
const PACKAGE_ROOT = new URL("../../../", import.meta.url);
const DATA = new URL("data/", PACKAGE_ROOT);

/** The package's root folder (where its node_modules are found from). */
export function cladePackageRoot(): string {
  return fileURLToPath(PACKAGE_ROOT);
}

/** The folder of the starting agent (a ReAct agent). */
export function agentTemplateDir(): string {
  return fileURLToPath(new URL("agent-template/react/", DATA));
}

let declarations: string | undefined;

/** The text of clade's `clade-agent.d.ts` (read once). */
export function agentApiDeclarations(): string {
  declarations ??= readFileSync(new URL(`agent-api/${AGENT_API_FILE}`, DATA), "utf8");
  return declarations;
}

/** A copy of `files` with clade's agent API declarations, whatever the folder held there. */
export function withAgentApi(files: AgentFiles): Map<string, string> {
  return sortedFiles([...files, [AGENT_API_FILE, agentApiDeclarations()]]);
}

/** The starting agent's files, with the API declarations; `name` replaces the manifest's. */
export function agentTemplate(name?: string): Map<string, string> {
  const files = withAgentApi(readAgentFolder(agentTemplateDir()));
  if (name !== undefined) {
    const manifest = JSON.parse(files.get(AGENT_MANIFEST) as string) as Record<string, unknown>;
    files.set(AGENT_MANIFEST, `${JSON.stringify({ ...manifest, name }, null, 2)}\n`);
    agentManifest(files); // a name the schema refuses is refused here, naming the field
  }
  return files;
}
