// Public surface of the model module. Call initBackend() (or useBackend()) once before using a
// model: it picks the backend, installs the wasm/cpu kernel fixes and registers gradients.
export { activeBackend, availableBackends, BACKEND_NAMES, BackendError, initBackend, useBackend, type BackendInfo, type BackendName, type InitBackendOptions } from './backend'
export {
  BertTokenClassifier, DEFAULT_BERT_CONFIG, DEFAULT_HEAD, MASK_VALUE, encoderParamShapes, headParamNames, isLinearWeight, makeBertConfig, validateConfig,
  type BertConfig, type BertInputs, type BertOutput, type ForwardOptions, type HeadInfo,
} from './bert'
export { dense, dropout, gelu, layerNorm } from './ops'
export { bertConfigFromHf, bertConfigToHf, CheckpointError, exportHfTensors, HEADS_KEY, loadCheckpoint, METADATA_FILE, saveCheckpoint, type LoadedCheckpoint, type LoadOptions, type SaveOptions } from './checkpoint'
export { ensureGradients } from './gradients'
export { forwardFlops, presetConfig } from './presets'
export { Rng } from '../rng'
export { parseSafetensors, readSafetensors, SafetensorsError, SafetensorsReader, serializeSafetensors, writeSafetensors, type SafetensorsContents, type StoredTensor, type TensorToWrite } from './safetensors'
export { writeFileAtomic } from '../fs/atomic'
