// The one place for model presets and training recipe defaults: the CLI, the model host, main's
// handlers and the renderer's forms all read them from here. Imports nothing, so the renderer
// can import the values without bundling zod.
//
// Presets. 'bert-base' is HF's BERT-base (BioBERT, PubMedBERT and bert-base-cased share it) and
// is what teachers look like; the cpu-* presets are students sized to train on a laptop with the
// wasm backend (one core: tfjs-backend-wasm has no threads in Node).
//
// Sizing, measured with `npm run bench:engine` on a 2-vCPU Xeon, wasm + SIMD on one core, batch
// 16 × 64 tokens, vocabulary 28,996, tokens per CPU-second (the machine was shared; see the
// engine report for the full table):
//   cpu-tiny    2 × 128:  forward ~8-13k tok/s, train ~1.8-2k tok/s  (NCBI-disease epoch ≈ 1 min)
//   cpu-small   4 × 256:  forward ~2.0k tok/s,  train ~500 tok/s     (epoch ≈ 4-5 min)
//   cpu-medium  6 × 384:  forward ~0.7k tok/s,  train ~180 tok/s     (epoch ≈ 12 min)
//   bert-base  12 × 768:  forward ~80 tok/s; a training step ~3 min (teachers only)
// Why these widths:
//  - wasm's XNNPACK GEMM runs at ~15-20 GFLOP/s on one core for 256-wide and wider layers but
//    drops to ~8-10 for 128-wide ones, so cpu-tiny is mostly a smoke-test size; 256 is the
//    narrowest width that keeps the matmuls efficient, and 4 layers keep an epoch in minutes.
//  - head size 64 everywhere (as BERT), so student heads line up with a BERT-base teacher's for
//    attention distillation; widths are multiples of 64, intermediate = 4 × hidden as in BERT.
//  - the per-step cost that does not shrink with width (Adam over the 28,996 × H word
//    embeddings, dropout masks, attention products at ~6 GFLOP/s) is why narrower models gain
//    less than their FLOP count suggests.
// The vocabulary size comes from the tokenizer (vocab.txt), not from the preset.

export type PresetName = 'cpu-tiny' | 'cpu-small' | 'cpu-medium' | 'bert-base'

export interface ModelPreset {
  name: PresetName
  /** Encoder layers. */
  layers: number
  /** Hidden width. */
  hidden: number
  heads: number
  /** Feed-forward width. */
  intermediate: number
  /** What to tell the user about it (lower case, no final stop). */
  description: string
}

/** Smallest first, as the app lists them. */
export const MODEL_PRESETS: readonly ModelPreset[] = [
  { name: 'cpu-tiny', layers: 2, hidden: 128, heads: 2, intermediate: 512, description: 'quick experiments: trains in seconds per epoch' },
  { name: 'cpu-small', layers: 4, hidden: 256, heads: 4, intermediate: 1024, description: 'the BERT preset to start with: trains in minutes per epoch on a laptop' },
  { name: 'cpu-medium', layers: 6, hidden: 384, heads: 6, intermediate: 1536, description: 'best accuracy that still trains overnight on a laptop' },
  { name: 'bert-base', layers: 12, hidden: 768, heads: 12, intermediate: 3072, description: 'BERT-base shape: needs a GPU (tensorflow-gpu backend)' },
]

export const PRESET_NAMES: readonly PresetName[] = MODEL_PRESETS.map((p) => p.name)

export const DEFAULT_PRESET: PresetName = 'cpu-small'

/**
 * The character-aware word tagger (BiLSTM-CRF over words and their characters): what `train` and
 * the app make from scratch unless a BERT preset is chosen, because it learns far more from small
 * labelled sets (docs/ACCURACY.md). Chosen like a preset in the app's form.
 */
export const WORD_LSTM = 'word-lstm'
export const WORD_LSTM_CHOICE = {
  name: WORD_LSTM,
  shape: 'words + characters → BiLSTM 2 × 200 → CRF',
  description: 'recommended: the most accurate from scratch on a few hundred abstracts; trains and tags on the CPU',
} as const

/** A from-scratch choice of the app's form: the word tagger or a BERT preset. */
export function isScratchChoice(name: string): boolean {
  return name === WORD_LSTM || isPresetName(name)
}

export function isPresetName(name: string): name is PresetName {
  return (PRESET_NAMES as readonly string[]).includes(name)
}

/** The preset called `name`; throws naming the choices when there is none. */
export function findPreset(name: string): ModelPreset {
  const preset = MODEL_PRESETS.find((p) => p.name === name)
  if (!preset) throw new Error(`unknown model preset '${name}' (one of ${PRESET_NAMES.join(', ')})`)
  return preset
}

/** What the training and distillation loops use for an option the caller leaves out (HF Trainer-like). */
export const TRAIN_DEFAULTS = {
  epochs: 3,
  batchSize: 16,
  lr: 5e-5,
  warmupRatio: 0.1,
  weightDecay: 0.01,
  maxGradNorm: 1.0,
  seed: 42,
  maxLength: 128,
  sentenceLevel: true,
  evalBatchSize: 32,
} as const

/**
 * Training a randomly initialised model (no pre-training): larger steps, more epochs, a vocabulary
 * learnt from the corpus, and the accuracy levers that `npm run bench:accuracy` measured to help
 * on NCBI-disease devel (docs/ACCURACY.md): a CRF output layer and one mention-replaced copy of
 * the training set. Checkpoint averaging (averageLast ≥ 2) did not help there and is off.
 */
export const SCRATCH_RECIPE = { preset: DEFAULT_PRESET, lr: 1e-3, epochs: 10, warmupRatio: 0.1, vocabSize: 8000, wordLevelVocabSize: 20000, lowercase: true, crf: true, augmentCopies: 1, averageLast: 0 } as const

/** Fine-tuning a pre-trained encoder (the BERT recipe). */
export const FINETUNE_RECIPE = { lr: 5e-5, epochs: 3, warmupRatio: 0.1 } as const

/**
 * Distilling a teacher into students (the command line and the app); taggedDocuments: the most
 * unreviewed documents the app's teachers tag for a label-level (teacher tags) distillation, a seeded sample.
 */
export const DISTILL_RECIPE = { lr: 5e-5, epochs: 3, taggedDocuments: 500 } as const

/**
 * The app's retraining from corrections (retrain:start, Auto-improve): `epochs` over the reviewed
 * documents, but never more than `maxSteps` optimizer steps, so that a round's wait stays about a
 * minute however many documents are reviewed (issue 30 item 3; bench:active --latency measures
 * it, and bench:active simulates the correction loop with the same budget).
 */
export const RETRAIN_RECIPE = { epochs: 3, maxSteps: 200 } as const

/**
 * The app's "Adapt to my documents" (models:adapt): continued masked-LM pretraining of a workspace
 * model on the workspace's own documents (titles and abstracts). Three passes as in fine-tuning,
 * but never more than maxSteps steps, so a workspace of many thousands of abstracts still ends in
 * a bounded time; batches of 16 so that a small workspace still gets a few dozen steps; every 20th
 * packed sequence held out (5 %) so that even a small workspace has a held-out masked-token
 * accuracy. Below minWords words of text the encoder would only be disturbed, not adapted.
 */
export const ADAPT_RECIPE = { epochs: 3, maxSteps: 3000, batchSize: 16, maxLength: 128, heldOutEvery: 20, minWords: 2000 } as const

/** Share of the labelled documents the app holds out as devel set in models:train and distill:start. */
export const DEV_FRACTION = 0.1

/**
 * What the app's forms start with. Training from scratch starts at 3 epochs rather than the
 * recipe's 10 so that a first model appears within minutes; the user can raise it. A request
 * that leaves a field out gets the recipe above.
 */
export const FORM_DEFAULTS = {
  preset: WORD_LSTM as string,
  trainEpochs: 3,
  /** The word tagger's epochs are short (under a minute for NCBI-disease's 593 training abstracts on one thread, measured) and devel F1 still rises after ten. */
  wordTaggerEpochs: 10,
  retrainEpochs: RETRAIN_RECIPE.epochs,
  distillEpochs: DISTILL_RECIPE.epochs,
  adaptEpochs: ADAPT_RECIPE.epochs,
} as const

/**
 * Peak learning rate for further training of a model (retraining, or a student initialised from a
 * teacher): half the rate it was trained with when known, else the fine-tuning rate for
 * BERT-sized encoders and 5e-4 for the small students (trained from scratch at 1e-3).
 */
export function continuedTrainingLr(previousLr: number | undefined, hiddenSize: number): number {
  if (previousLr) return previousLr * 0.5
  return hiddenSize >= 512 ? FINETUNE_RECIPE.lr : 5e-4
}

/**
 * Active-learning strategies: the order in which the review queue (and `npm run bench:active`'s
 * simulated annotator) takes documents. The scores behind them live in core/active/strategies.ts;
 * the names are here so that the IPC contract and the window can offer them.
 */
export const ACTIVE_STRATEGIES = ['order', 'random', 'least-confidence', 'margin', 'entropy', 'diverse'] as const
export type ActiveStrategy = (typeof ACTIVE_STRATEGIES)[number]

/**
 * The review queue's strategy in a workspace that has not chosen one. Least confidence for now (the
 * queue's order before strategies were selectable); the one place to change when docs/ACTIVE.md's
 * measurement picks the default.
 */
export const REVIEW_STRATEGY_DEFAULT: ActiveStrategy = 'least-confidence'

/** What the window calls each strategy and how it orders the queue. */
export const STRATEGY_LABELS: Record<ActiveStrategy, { name: string; description: string }> = {
  order: { name: 'Document order', description: 'as imported, top to bottom' },
  random: { name: 'Random', description: 'a fixed shuffle of the tagged documents' },
  'least-confidence': { name: 'Least confidence', description: "lowest mean confidence of the model's top label first" },
  margin: { name: 'Margin', description: 'smallest gap between the two best labels first' },
  entropy: { name: 'Entropy', description: 'most spread-out label probabilities first' },
  diverse: { name: 'Diverse', description: 'the least confident document of each topic cluster first' },
}

/**
 * The correction loop's settings and its fixed held-out set. Every `heldOutEvery`-th share of the
 * reviewed documents (chosen per document by a seeded hash, so a document's side never depends
 * on which others were reviewed) is held out of every retrain and measures it; at least
 * `minHeldOut` when there are that many reviewed documents besides one to train on.
 * Auto-improve retrains every `autoImproveEvery` newly reviewed documents by default.
 */
export const LEARNING_LOOP = { heldOutEvery: 5, heldOutSeed: 20_230_530, minHeldOut: 3, autoImproveEvery: 10, autoImproveMaxEvery: 1000 } as const
