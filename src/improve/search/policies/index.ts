/** The search methods by name, each with its hyperparameters' defaults. */
import type { SearchPolicy } from "../policy.js";
import { createDgmPolicy, type DgmHyperparameters } from "./dgm.js";
import { createGreedyPolicy, type GreedyHyperparameters } from "./greedy.js";
import { createHgmPolicy, type HgmHyperparameters } from "./hgm.js";
import { createRandomPolicy, type RandomHyperparameters } from "./random.js";

export const METHODS = ["hgm", "dgm", "greedy", "random"] as const;
export type Method = (typeof METHODS)[number];

export interface MethodHyperparameters {
  hgm?: Partial<HgmHyperparameters>;
  dgm?: Partial<DgmHyperparameters>;
  greedy?: Partial<GreedyHyperparameters>;
  random?: Partial<RandomHyperparameters>;
}

export function isMethod(name: string): name is Method {
  return (METHODS as readonly string[]).includes(name);
}

/** A fresh policy (policies keep per-search state: create one per search). */
export function createPolicy(
  method: Method,
  hyperparameters: MethodHyperparameters = {},
): SearchPolicy {
  switch (method) {
    case "hgm":
      return createHgmPolicy(hyperparameters.hgm);
    case "dgm":
      return createDgmPolicy(hyperparameters.dgm);
    case "greedy":
      return createGreedyPolicy(hyperparameters.greedy);
    case "random":
      return createRandomPolicy(hyperparameters.random);
  }
}
