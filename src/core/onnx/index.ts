// Fast inference: ONNX export of the BERT token classifier and an onnxruntime-node engine with a
// tfjs fallback. tfjs is only loaded when the fallback runs.
export { GraphBuilder, attr, type Attr, type ElemType, type TensorValue } from './graph'
export {
  exportOnnx,
  exportCheckpointToOnnx,
  findHeads,
  onnxConfigOf,
  resolveFusion,
  OnnxExportError,
  ONNX_OPSET,
  type WeightsMap,
  type WeightTensor,
  type OnnxBertConfig,
  type ExportOptions,
  type FusedOps,
  type OnnxHead,
  type CheckpointExportOptions,
  type CheckpointExportResult,
} from './export'
export { ownOnnxGraph, onnxCacheDir, ONNX_CACHE_ENV, type OwnGraph, type OwnGraphOptions } from './graph-cache'
export { readOnnxMetadata, readCheckpointFiles, readCheckpointWeights, OnnxFileError, ONNX_FILE } from './checkpoint'
export {
  openInferenceEngine,
  defaultExecutionProviders,
  InferenceEngineError,
  type InferenceEngine,
  type InferenceBatch,
  type InferenceResult,
  type OpenEngineOptions,
  type EngineName,
  type ExecutionProvider,
} from './session'
