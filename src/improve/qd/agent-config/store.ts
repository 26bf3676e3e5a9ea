/**
 * Elites' configurations as DIR/<id>.json, so a resumed run finds its parents (as
 * FilePolicyStore keeps weights). Written to a temporary file, then renamed: a crash leaves the
 * old file or the new one, never half of one. Read back through the same validation as a user's
 * file, so a damaged file is one clear error, not a bad genome.
 */
import { mkdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { GenomeStore } from "../cycle.js";
import { type AgentConfig, parseAgentConfig } from "./config.js";

const ID_PATTERN = /^[A-Za-z0-9_-]+$/;

export class FileAgentConfigStore implements GenomeStore<AgentConfig> {
  constructor(readonly dir: string) {}

  path(id: string): string {
    if (!ID_PATTERN.test(id)) throw new Error(`agent config store: "${id}" is not a usable id`);
    return join(this.dir, `${id}.json`);
  }

  async put(id: string, genome: AgentConfig): Promise<void> {
    const path = this.path(id);
    await mkdir(this.dir, { recursive: true });
    const temporary = `${path}.${process.pid}.put.tmp`;
    try {
      await writeFile(temporary, `${JSON.stringify(genome, null, 2)}\n`);
      await rename(temporary, path);
    } catch (error) {
      await rm(temporary, { force: true });
      throw error;
    }
  }

  async get(id: string): Promise<AgentConfig | undefined> {
    const path = this.path(id);
    let raw: string;
    try {
      raw = await readFile(path, "utf8");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
      throw error;
    }
    let json: unknown;
    try {
      json = JSON.parse(raw);
    } catch (error) {
      throw new Error(`${path}: not valid JSON (${(error as Error).message.split("\n")[0]})`);
    }
    return parseAgentConfig(json, path);
  }
}
