/**
 * The embedded policy as an agent (greedy and seeded sampling, the error for environments that
 * list no actions), and a learning sanity check: REINFORCE with Adam on a contextual bandit made
 * of text learns to stop at red and go at green.
 */
import { describe, expect, it } from "vitest";
import type { AgentState, EpisodeContext } from "../../../src/agent/types.js";
import { createRng } from "../../../src/env/rng.js";
import type { EnvInfo } from "../../../src/env/types.js";
import { Adam, clipGradNorm } from "../../../src/improve/rl/policy/adam.js";
import { Featurizer } from "../../../src/improve/rl/policy/features.js";
import { createPolicyModel, type PolicyModel } from "../../../src/improve/rl/policy/model.js";
import { policyBackward, policyGradientLogits } from "../../../src/improve/rl/policy/network.js";
import {
  argmax,
  createPolicyAgent,
  PolicyNeedsActionsError,
  sampleIndex,
  scoreActions,
} from "../../../src/improve/rl/policy/policy-agent.js";
import { type Tensor, zeroGrads, zerosLike } from "../../../src/improve/rl/policy/tensor.js";

const INFO: EnvInfo = {
  name: "lights",
  version: "1.0.0",
  description: "a test bandit",
  instruction: "Stop at a red light and go at a green one.",
  splits: { train: { start: 0, end: 10 }, test: { start: 10, end: 20 } },
  successThreshold: 1,
  maxSteps: 1,
};

function context(seed: number, sampleIndex = 0): EpisodeContext {
  return { env: INFO, taskIndex: 3, seed, sampleIndex };
}

function smallModel(seed: number): PolicyModel {
  return createPolicyModel({
    env: INFO.name,
    envVersion: INFO.version,
    seed,
    features: { dim: 1024 },
    hidden: 16,
    valueHidden: 4,
  });
}

function lightState(red: boolean, actions: string[]): AgentState {
  return {
    instruction: INFO.instruction,
    observation: { text: `the light is ${red ? "red" : "green"}`, availableActions: actions },
    history: [],
  };
}

const signal = new AbortController().signal;

describe("policy agent", () => {
  it("needs environments that list their actions", async () => {
    const agent = createPolicyAgent(smallModel(1), context(0));
    const state = lightState(true, []);
    await expect(agent.act(state, signal)).rejects.toThrow(PolicyNeedsActionsError);
    await expect(agent.act({ ...state, observation: { text: "x" } }, signal)).rejects.toThrow(
      /the embedded policy chooses among the actions an environment lists, and lights listed none/,
    );
  });

  it("greedy takes the highest score; sampling repeats for the same episode keys", async () => {
    const model = smallModel(2);
    const actions = ["stop", "go", "wait", "honk"];
    const state = lightState(true, actions);
    const scored = scoreActions(model, new Featurizer(model.features), state);
    const greedy = await createPolicyAgent(model, context(0)).act(state, signal);
    expect(greedy.action).toBe(actions[argmax(scored.forward.logits)]);

    const run = async (seed: number, sample: number) => {
      const agent = createPolicyAgent(model, context(seed, sample), { mode: "sample" });
      const out: string[] = [];
      for (let i = 0; i < 40; i++) out.push((await agent.act(state, signal)).action);
      return out;
    };
    expect(await run(5, 0)).toEqual(await run(5, 0));
    expect(await run(5, 0)).not.toEqual(await run(5, 1));
    expect(new Set(await run(5, 0)).size).toBeGreaterThan(1);
  });

  it("stops when aborted", async () => {
    const controller = new AbortController();
    controller.abort(new Error("stop now"));
    await expect(
      createPolicyAgent(smallModel(1), context(0)).act(lightState(true, ["a"]), controller.signal),
    ).rejects.toThrow("stop now");
  });

  it("sampleIndex walks the cumulative distribution", () => {
    expect(sampleIndex([0.2, 0.5, 0.3], 0)).toBe(0);
    expect(sampleIndex([0.2, 0.5, 0.3], 0.2)).toBe(1);
    expect(sampleIndex([0.2, 0.5, 0.3], 0.69)).toBe(1);
    expect(sampleIndex([0.2, 0.5, 0.3], 0.9999999999)).toBe(2);
    expect(argmax([1, 3, 3, 2])).toBe(1);
  });
});

/** REINFORCE with a constant baseline of 0.5, batches of 8, Adam, global-norm clipping. */
function trainBandit(
  seed: number,
  updates: number,
): { model: PolicyModel; accuracy: number; meanP: number } {
  const model = smallModel(seed);
  const featurizer = new Featurizer(model.features);
  const adam = new Adam(model.params, { lr: 0.01 });
  const grads = zerosLike(model.params);
  const rng = createRng(seed, 0xba4d17);
  const BATCH = 8;
  for (let update = 0; update < updates; update++) {
    zeroGrads(grads);
    for (let b = 0; b < BATCH; b++) {
      const red = rng.next() < 0.5;
      const actions = rng.next() < 0.5 ? ["stop", "go"] : ["go", "stop"];
      const { features, forward } = scoreActions(model, featurizer, lightState(red, actions));
      const choice = sampleIndex(forward.probs, rng.next());
      const reward = (actions[choice] === "stop") === red ? 1 : 0;
      const dLogits = policyGradientLogits(forward, choice, reward - 0.5, 0.001);
      policyBackward(model.params, grads, features, forward, dLogits, 1 / BATCH);
    }
    clipGradNorm(grads);
    adam.step(grads);
    model.provenance.step++;
  }
  let correct = 0;
  let meanP = 0;
  for (const red of [true, false]) {
    for (const actions of [
      ["stop", "go"],
      ["go", "stop"],
    ]) {
      const { forward } = scoreActions(model, featurizer, lightState(red, actions));
      const right = actions.indexOf(red ? "stop" : "go");
      if (argmax(forward.logits) === right) correct++;
      meanP += (forward.probs[right] as number) / 4;
    }
  }
  return { model, accuracy: correct / 4, meanP };
}

describe("learning sanity: a text contextual bandit", () => {
  it("REINFORCE + Adam reaches > 95 % correct choices, deterministically and fast", () => {
    const started = performance.now();
    const a = trainBandit(7, 300);
    const elapsed = performance.now() - started;
    expect(a.accuracy).toBe(1);
    expect(a.meanP).toBeGreaterThan(0.95);
    expect(elapsed).toBeLessThan(2000);

    const b = trainBandit(7, 300);
    for (const [name, t] of a.model.params) {
      expect((b.model.params.get(name) as Tensor).data).toEqual(t.data);
    }
  });

  it("before training it is at chance", () => {
    const { meanP } = trainBandit(7, 0);
    expect(Math.abs(meanP - 0.5)).toBeLessThan(0.05);
  });
});
