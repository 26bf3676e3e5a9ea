/** `clade init-agent DIR`: writes the starting agent folder (a ReAct agent) into DIR. */
import { basename, isAbsolute, resolve } from "node:path";
import {
  AGENT_MANIFEST,
  AgentFolderError,
  agentManifest,
  writeAgentFolder,
} from "../../agent/folder/files.js";
import { agentTemplate } from "../../agent/folder/template.js";
import { type CliIo, UsageError } from "../io.js";

/** What the folder's name may be as the agent's name (the manifest's rule). */
const NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,59}$/;

export function initAgentCommand(
  dir: string,
  options: { name?: string; json?: boolean },
  io: CliIo,
): number {
  const target = resolve(dir);
  // Without --name the agent is named after its folder, when that makes a valid name.
  const folderName = basename(target);
  const name = options.name ?? (NAME_PATTERN.test(folderName) ? folderName : undefined);
  let manifest: ReturnType<typeof agentManifest>;
  let files: Map<string, string>;
  try {
    files = agentTemplate(name);
    manifest = agentManifest(files);
    writeAgentFolder(target, files);
  } catch (error) {
    if (error instanceof AgentFolderError) {
      const message = error.message.replace(`${AGENT_MANIFEST}: name:`, "--name:");
      throw new UsageError(message);
    }
    throw error;
  }
  // The folder as the user typed it, as a path (--agent tells a folder from a built-in agent's
  // name by ./, ../ or /), quoted when a shell would split it.
  const asPath =
    isAbsolute(dir) || dir.startsWith("./") || dir.startsWith("../") ? dir : `./${dir}`;
  const shown = /^[\w./@+-]+$/.test(asPath) ? asPath : JSON.stringify(asPath);
  const next = [
    `clade eval --agent ${shown} --env maze --model <spec>`,
    `clade evolve --agent ${shown} --env maze --model <spec> --modify-model <spec> --run-id <id>`,
  ];
  if (options.json) {
    const out = {
      schema: "clade.init-agent/1",
      dir: target,
      name: manifest.name,
      entry: manifest.entry,
      files: [...files.keys()],
      next,
    };
    io.stdout(`${JSON.stringify(out)}\n`);
    return 0;
  }
  io.stdout(
    `Wrote the agent "${manifest.name}" (a ReAct agent) into ${target}:\n` +
      [...files.keys()].map((path) => `  ${path}\n`).join("") +
      `\nEdit ${manifest.entry} and the files beside it, then:\n` +
      next.map((command) => `  ${command}\n`).join(""),
  );
  return 0;
}
