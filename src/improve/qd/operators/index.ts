/** CycleQD's genome operators on embedded-policy weights: task vectors, merging, mutation. */
export { childPolicy } from "./child.js";
export {
  drawMergeWeights,
  MERGE_WEIGHT_STD,
  type MergeResult,
  mergeParents,
  mergeTaskVectors,
} from "./merge.js";
export {
  applySvdMutation,
  drawSvdScales,
  type ExpertSvds,
  expertSvds,
  GAUSSIAN_MUTATION_STD,
  gaussianMutation,
  SVD_MUTATION_RATE,
  svdMutation,
} from "./mutate.js";
export { standardNormal } from "./normal.js";
export { scaledProduct, type ThinSvd, thinSvd } from "./svd.js";
export { applyTaskVector, checkSameLayout, taskVector } from "./task-vector.js";
