/**
 * A child's weights as a policy: the base's network, features and provenance with new
 * parameters. The provenance (env, env version, seed, step) is the base's, unchanged: a child
 * took no optimiser steps of its own, and its lineage (parents, merge weights, mutation) is the
 * QD run's record, not the weight file's.
 */
import type { PolicyModel } from "../../rl/policy/model.js";
import { checkParams } from "../../rl/policy/network.js";
import type { Params } from "../../rl/policy/tensor.js";

/** Throws one line unless `params` fit the base's network. */
export function childPolicy(base: PolicyModel, params: Params): PolicyModel {
  checkParams(params, base.network);
  return {
    network: structuredClone(base.network),
    features: structuredClone(base.features),
    params,
    provenance: { ...base.provenance },
  };
}
