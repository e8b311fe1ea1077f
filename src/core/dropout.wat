;; Dropout masks for Rng.fillDropoutMask (./rng.ts): four xoshiro128** generators side by side
;; (WebAssembly SIMD, one i32x4 lane each), every draw deciding two units by its high and its low
;; 16 bits. A training step fills millions of mask values; the one scalar generator made that the
;; largest part of the host's work in a step.
;;
;; fill(out, n, state, threshold, scale): writes ⌈n / 8⌉·8 floats from byte offset `out` (the
;; caller leaves room): iteration j's draws (lanes 0-3) give units 8j … 8j+3 by their high 16
;; bits and 8j+4 … 8j+7 by their low 16 bits, a unit kept (value `scale`) when its bits are
;; ≥ threshold, else 0. `state`: byte offset of the lanes' state, s0 s1 s2 s3 as four i32x4,
;; advanced in place.
;;
;; Edited here, then `npx tsx scripts/build-wasm.ts` regenerates ./dropout-wasm.ts; a unit test
;; checks that the two agree.
(module
  (import "env" "memory" (memory 1))
  (func (export "fill")
    (param $out i32) (param $n i32) (param $state i32) (param $threshold i32) (param $scale f32)
    (local $s0 v128) (local $s1 v128) (local $s2 v128) (local $s3 v128)
    (local $x v128) (local $r v128) (local $t v128)
    (local $T v128) (local $S v128) (local $low v128)
    (local $at i32) (local $end i32)
    (local.set $s0 (v128.load (local.get $state)))
    (local.set $s1 (v128.load offset=16 (local.get $state)))
    (local.set $s2 (v128.load offset=32 (local.get $state)))
    (local.set $s3 (v128.load offset=48 (local.get $state)))
    (local.set $T (i32x4.splat (local.get $threshold)))
    ;; scale's bits: a kept unit is the compare's all-ones mask AND these bits
    (local.set $S (i32x4.splat (i32.reinterpret_f32 (local.get $scale))))
    (local.set $low (i32x4.splat (i32.const 0xffff)))
    (local.set $at (local.get $out))
    ;; ⌈n / 8⌉ iterations of 32 bytes
    (local.set $end (i32.add (local.get $out) (i32.shl (i32.shr_u (i32.add (local.get $n) (i32.const 7)) (i32.const 3)) (i32.const 5))))
    (block $done
      (loop $draws
        (br_if $done (i32.ge_u (local.get $at) (local.get $end)))
        ;; result = rotl(s1·5, 7)·9
        (local.set $x (i32x4.mul (local.get $s1) (i32x4.splat (i32.const 5))))
        (local.set $r
          (i32x4.mul
            (v128.or (i32x4.shl (local.get $x) (i32.const 7)) (i32x4.shr_u (local.get $x) (i32.const 25)))
            (i32x4.splat (i32.const 9))))
        ;; the xoshiro128 state step
        (local.set $t (i32x4.shl (local.get $s1) (i32.const 9)))
        (local.set $s2 (v128.xor (local.get $s2) (local.get $s0)))
        (local.set $s3 (v128.xor (local.get $s3) (local.get $s1)))
        (local.set $s1 (v128.xor (local.get $s1) (local.get $s2)))
        (local.set $s0 (v128.xor (local.get $s0) (local.get $s3)))
        (local.set $s2 (v128.xor (local.get $s2) (local.get $t)))
        (local.set $s3 (v128.or (i32x4.shl (local.get $s3) (i32.const 11)) (i32x4.shr_u (local.get $s3) (i32.const 21))))
        ;; both halves are below 2^16, so the signed compare is the unsigned one
        (v128.store (local.get $at)
          (v128.and (i32x4.ge_s (i32x4.shr_u (local.get $r) (i32.const 16)) (local.get $T)) (local.get $S)))
        (v128.store offset=16 (local.get $at)
          (v128.and (i32x4.ge_s (v128.and (local.get $r) (local.get $low)) (local.get $T)) (local.get $S)))
        (local.set $at (i32.add (local.get $at) (i32.const 32)))
        (br $draws)))
    (v128.store (local.get $state) (local.get $s0))
    (v128.store offset=16 (local.get $state) (local.get $s1))
    (v128.store offset=32 (local.get $state) (local.get $s2))
    (v128.store offset=48 (local.get $state) (local.get $s3))))
