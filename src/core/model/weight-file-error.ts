// The error of a weight file a user can act on (corrupt, truncated, refused), whatever its format.
// Its name stays 'SafetensorsError': the CLI, the model host and the ONNX reader already treat
// that name as a problem with the user's file rather than an internal error. It lives apart from
// ./safetensors so that ./torch-checkpoint, which ./safetensors reads .bin files through, can
// extend it without an import cycle.
import { FileError } from '../fs/file-error'

export class SafetensorsError extends FileError {
  override name = 'SafetensorsError'
}
