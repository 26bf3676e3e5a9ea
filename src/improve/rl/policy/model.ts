/**
 * A policy as one value (network shape, feature settings, weights, provenance) and as one
 * safetensors file: the weights as named F32 tensors, everything else as string metadata, so
 * that other tools can read the file and the quality-diversity operators can merge and mutate
 * its matrices.
 *
 * Metadata keys: "architecture" (ARCHITECTURE), "network" (NetworkConfig as JSON), "features"
 * (FeatureSettings as JSON), "env", "env_version", "seed", "step" (decimal integers).
 */
import {
  checkFeatureSettings,
  defaultFeatureSettings,
  type FeatureOverrides,
  type FeatureSettings,
} from "./features.js";
import {
  ARCHITECTURE,
  checkParams,
  DEFAULT_HIDDEN,
  DEFAULT_VALUE_HIDDEN,
  initParams,
  type NetworkConfig,
} from "./network.js";
import {
  decodeSafetensors,
  encodeSafetensors,
  readSafetensors,
  type SafetensorsContent,
  SafetensorsError,
  writeSafetensors,
} from "./safetensors.js";
import { cloneParams, type Params } from "./tensor.js";

/** Where the weights came from. */
export interface PolicyProvenance {
  env: string;
  envVersion: string;
  /** The training seed (also the initialisation's). */
  seed: number;
  /** Optimiser steps taken so far. */
  step: number;
}

export interface PolicyModel {
  network: NetworkConfig;
  features: FeatureSettings;
  params: Params;
  provenance: PolicyProvenance;
}

export interface CreatePolicyOptions {
  env: string;
  envVersion: string;
  seed: number;
  features?: FeatureOverrides;
  hidden?: number;
  valueHidden?: number;
  dtype?: "F32" | "F64";
}

/** A freshly initialised policy (same options → identical weights). */
export function createPolicyModel(options: CreatePolicyOptions): PolicyModel {
  const features = defaultFeatureSettings(options.features);
  const network: NetworkConfig = {
    inputDim: features.dim,
    hidden: options.hidden ?? DEFAULT_HIDDEN,
    valueHidden: options.valueHidden ?? DEFAULT_VALUE_HIDDEN,
  };
  return {
    network,
    features,
    params: initParams(network, options.seed, { dtype: options.dtype }),
    provenance: { env: options.env, envVersion: options.envVersion, seed: options.seed, step: 0 },
  };
}

/** The metadata stored with the weights. */
export function policyMetadata(model: PolicyModel): Record<string, string> {
  return {
    architecture: ARCHITECTURE,
    network: JSON.stringify(model.network),
    features: JSON.stringify(model.features),
    env: model.provenance.env,
    env_version: model.provenance.envVersion,
    seed: String(model.provenance.seed),
    step: String(model.provenance.step),
  };
}

/** The safetensors bytes of a policy (weights stored as F32 whatever they are in memory). */
export function encodePolicy(model: PolicyModel): Uint8Array {
  return encodeSafetensors(asF32(model.params), policyMetadata(model));
}

/** A policy from safetensors bytes; throws one line when the file is not a usable policy. */
export function decodePolicy(bytes: Uint8Array): PolicyModel {
  return policyFromSafetensors(decodeSafetensors(bytes));
}

/** A policy from a decoded safetensors file (checks metadata, settings and every shape). */
export function policyFromSafetensors(
  { tensors, metadata }: SafetensorsContent,
  source = "policy file",
): PolicyModel {
  const fail = (why: string): never => {
    throw new SafetensorsError(`${source}: ${why}`);
  };
  const field = (key: string): string => metadata[key] ?? fail(`metadata has no "${key}"`);
  const architecture = field("architecture");
  if (architecture !== ARCHITECTURE) {
    fail(`architecture "${architecture}" is not ${ARCHITECTURE}`);
  }
  const parse = (key: string): unknown => {
    const text = field(key);
    try {
      return JSON.parse(text);
    } catch {
      return fail(`metadata "${key}" is not JSON`);
    }
  };
  const network = parse("network") as NetworkConfig;
  const features = parse("features");
  try {
    checkFeatureSettings(features);
    for (const key of ["inputDim", "hidden", "valueHidden"] as const) {
      if (!Number.isInteger(network?.[key]) || network[key] < 1)
        throw new Error(`network: bad ${key}`);
    }
    if (network.inputDim !== features.dim) {
      throw new Error(
        `network input ${network.inputDim} differs from the features' dim ${features.dim}`,
      );
    }
    checkParams(tensors, network);
  } catch (error) {
    fail((error as Error).message);
  }
  const integer = (key: string): number => {
    const value = Number(field(key));
    return Number.isSafeInteger(value) ? value : fail(`metadata "${key}" is not an integer`);
  };
  return {
    network,
    features: features as FeatureSettings,
    params: tensors,
    provenance: {
      env: field("env"),
      envVersion: field("env_version"),
      seed: integer("seed"),
      step: integer("step"),
    },
  };
}

export async function savePolicy(path: string, model: PolicyModel): Promise<void> {
  await writeSafetensors(path, asF32(model.params), policyMetadata(model));
}

export async function loadPolicy(path: string): Promise<PolicyModel> {
  return policyFromSafetensors(await readSafetensors(path), `policy file ${path}`);
}

function asF32(params: Params): Params {
  const f32 = [...params.values()].every((t) => t.data instanceof Float32Array);
  return f32 ? params : cloneParams(params, "F32");
}
