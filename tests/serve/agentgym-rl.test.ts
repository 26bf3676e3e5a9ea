/**
 * AgentGym-RL's rollout against clade's server, replayed for every AgentGym task name a clade
 * environment plays: `init_env_client` builds one client per sample (retrying a failed create),
 * each sample is reset to its item's index and observed, every round steps all unfinished
 * samples in parallel, a sample's score is its last reward (an exception scores it 0), and at
 * the end every client is closed (clients without close() keep their instance). Also: several
 * training steps through a server whose cap holds one batch, where room for the next batch comes
 * from evicting the last batch's instances, and no sample is scored 0 for it.
 */
import { afterEach, describe, expect, it } from "vitest";
import { findEnv } from "../../src/env/registry.js";
import {
  agentgymTasksServedBy,
  type RunningEnvServer,
  type StartEnvServerOptions,
  startEnvServer,
} from "../../src/serve/index.js";
import {
  CLIENT_FIXTURES,
  type ClientFixture,
  loadFixture,
  loadJson,
  ReferenceModel,
  ReplayClient,
} from "./agentgym-replay.js";

let server: RunningEnvServer | undefined;

afterEach(async () => {
  await server?.close();
  server = undefined;
});

const RL = loadJson("agentgym-rl.json") as {
  init_env_client: { max_retries_default: number };
};

interface Sample {
  itemId: string;
  client?: ReplayClient;
  model?: ReferenceModel;
  text: string;
  score: number;
  done: boolean;
  rounds: number;
}

/** init_env_client: construct the client, retrying any failure (the test waits `pauseMs`). */
async function initEnvClient(
  fixture: ClientFixture,
  envAddr: string,
  pauseMs: number,
  maxRetries = RL.init_env_client.max_retries_default,
): Promise<ReplayClient> {
  for (let retry = 0; ; ) {
    try {
      return await ReplayClient.create(fixture, envAddr);
    } catch (error) {
      retry += 1;
      if (retry > maxRetries) throw error;
      await new Promise((resolve) => setTimeout(resolve, pauseMs));
    }
  }
}

/** generate_sequences: one rollout of `itemIds` × n samples; the samples' scores. */
async function rollout(
  fixture: ClientFixture,
  envAddr: string,
  itemIds: string[],
  options: { n: number; maxRounds: number; pauseMs?: number },
): Promise<Sample[]> {
  const samples: Sample[] = itemIds.flatMap((itemId) =>
    Array.from({ length: options.n }, () => ({
      itemId,
      text: "",
      score: 0,
      done: false,
      rounds: 0,
    })),
  );
  // All clients first, one after another.
  for (const sample of samples) {
    sample.client = await initEnvClient(fixture, envAddr, options.pauseMs ?? 10);
  }
  for (const sample of samples) {
    const client = sample.client as ReplayClient;
    // The task name is what comes before the first "_", the index what comes after the last.
    expect(sample.itemId.split("_")[0]).toBe(fixture.agentgym_task);
    const index = Number(sample.itemId.split("_").at(-1));
    sample.model = new ReferenceModel(fixture, index);
    await client.reset(index);
    await client.observe();
    sample.text = client.serverObservation;
  }
  for (let round = 0; round < options.maxRounds; round++) {
    const active = samples.filter((sample) => !sample.done);
    if (active.length === 0) break;
    const replies = await Promise.all(
      active.map((sample) => (sample.model as ReferenceModel).reply(sample.text)),
    );
    await Promise.all(
      active.map(async (sample, i) => {
        sample.rounds += 1;
        try {
          const output = await (sample.client as ReplayClient).step(replies[i] as string);
          sample.score = output.reward;
          sample.done = output.done;
          sample.text = output.state;
          sample.model?.observe(output.state, output.reward);
        } catch {
          sample.score = 0;
          sample.done = true;
        }
      }),
    );
  }
  for (const sample of samples) {
    try {
      await sample.client?.close();
    } catch {
      // "Error during closing env": printed and ignored.
    }
  }
  return samples;
}

describe.each(CLIENT_FIXTURES)("AgentGym-RL with task_name=%s", (name) => {
  const fixture = loadFixture(name);

  it(`trains on clade's ${fixture.clade_env}: every sample scored as its episode ended`, async () => {
    const def = findEnv(fixture.clade_env);
    expect(agentgymTasksServedBy(def.info.name).map((task) => task.name)).toContain(name);
    server = await startEnvServer(def);
    // Training items come from the train split.
    const { start } = def.info.splits.train;
    const items = [start, start + 37].map((index) => `${name}_${index}`);
    const samples = await rollout(fixture, server.url + fixture.base_path, items, {
      n: 2,
      maxRounds: fixture.max_rounds,
    });
    expect(samples.map((sample) => [sample.itemId, sample.score, sample.done])).toEqual(
      samples.map((sample) => [sample.itemId, 1, true]),
    );
    // The rollout closed what it could: clients with close() gave their instance back.
    expect(server.pool.size).toBe(fixture.close ? 0 : samples.length);
  });
});

describe("AgentGym-RL across training steps", () => {
  async function serve(env: string, options: StartEnvServerOptions) {
    const log: string[] = [];
    server = await startEnvServer(findEnv(env), { ...options, log: (line) => log.push(line) });
    return log;
  }

  it("makes room for the next batch by evicting the last one's instances (no close())", async () => {
    const fixture = loadFixture("todo");
    // Room for exactly one batch (2 items × n=2), as one client.
    const log = await serve("todo", {
      maxInstances: 4,
      maxInstancesPerClient: 4,
      evictIdleAfterMs: 150,
    });
    const url = (server as RunningEnvServer).url + fixture.base_path;
    const batches = [
      ["todo_100", "todo_101"],
      ["todo_102", "todo_103"],
      ["todo_104", "todo_105"],
    ];
    for (const [step, items] of batches.entries()) {
      const samples = await rollout(fixture, url, items, { n: 2, maxRounds: fixture.max_rounds });
      expect(
        samples.map((sample) => sample.score),
        `training step ${step}`,
      ).toEqual([1, 1, 1, 1]);
      expect(server?.pool.size).toBe(4);
      // The "update" between two rollouts.
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    // Each later batch evicted the earlier batch's finished episodes, and the log says so.
    const evictions = log.filter((line) => line.includes("evicted"));
    expect(evictions).toHaveLength(8);
    for (const line of evictions) {
      expect(line).toMatch(
        /^instance \d+ \(client 127\.0\.0\.1, task 10[0-3], \d+ steps?, episode finished with reward 1\) evicted after [\d.]+ s without calls, to make room for a new instance \(client 127\.0\.0\.1 holds its maximum of 4 instances\)$/,
      );
    }
  });

  it("waits (429, retried by init_env_client) rather than evict a batch still in use", async () => {
    const fixture = loadFixture("babyai");
    await serve("gridworld", { maxInstances: 4, maxInstancesPerClient: 2, evictIdleAfterMs: 400 });
    const url = (server as RunningEnvServer).url + fixture.base_path;
    const busy = [await ReplayClient.create(fixture, url), await ReplayClient.create(fixture, url)];
    await busy[0]?.reset(100);
    await busy[1]?.reset(101);
    // Fresh, unfinished instances are not evicted: the create is refused...
    const refused = await fetch(`${url}/create`, { method: "POST" });
    expect(refused.status).toBe(429);
    // ...and init_env_client keeps retrying until the least recently used one has been idle
    // long enough (here 0.4 s; 60 s by default), then gets its instance.
    const started = Date.now();
    const late = await initEnvClient(fixture, url, 50);
    expect(Date.now() - started).toBeGreaterThanOrEqual(300);
    expect(server?.pool.ids()).toContain(late.id);
    expect(server?.pool.ids()).not.toContain(busy[0]?.id);
    // The evicted instance's client now fails, and that sample scores 0: the price of a cap
    // below batch × n, which the server log names.
    await expect(busy[0]?.step("Action:\nturn left")).rejects.toThrow(/reads "observation"/);
  });
});
