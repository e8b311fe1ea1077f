// Knowledge distillation (FastBioNER dynamic weights, multi-teacher multi-feature KD, MT-BioNER
// multi-task heads). See distill.ts for the losses and mapping.ts for layer indexing.
export { DEFAULT_PHI_B, phi, phiZeroStep, rampTemperature, temperatureLevels, type TemperatureRamp } from './schedule'
export { checkLayerPairs, defaultLayerPairs, featurePairs, parseLayerPairs, uniformLayerMap, type FeatureAttentionPair, type FeatureHiddenPair, type LayerPair } from './mapping'
export { attentionMse, hiddenMse, labeledMask, maskedKl, realMask, softCrossEntropy, softTargets } from './losses'
export { createStudent, teacherParamFor, type Student, type StudentOptions } from './student'
export {
  attentionFromLayerInput, cachedProvider, estimateCacheBytes, onlineProvider, openTeacherRunner, ortRunner, tfjsRunner,
  type TeacherEngine, type TeacherExample, type TeacherNeeds, type TeacherProvider, type TeacherRunner, type TeacherTargets,
} from './teacher'
export { planTaskBatches, type MixOptions, type TaskBatch, type TaskMix } from './multitask'
export {
  buildDistillExamples, defaultTeacherHead, distill, DISTILL_DEFAULTS, DistillError, KD_MODES, lossWeights,
  type DistillExamples, type DistillOptions, type DistillProgress, type DistillResult, type DistillTask, type FixedWeights, type KdMode, type StepRecord, type TeacherSpec,
} from './distill'
export { distillCheckpoints, taskLabels, type DistillRunOptions, type DistillRunResult } from './run'
export { openDistillEngine, type DistillEngine, type DistillStepInputs, type DistillStepResult } from './engine'
