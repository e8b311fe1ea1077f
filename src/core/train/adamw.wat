;; AdamW's update of n float32 values, four at a time (WebAssembly SIMD), for HostAdamW
;; (./optimizer.ts). JavaScript has no SIMD and spent most of an update on one scalar division
;; and square root per value; f32x4.div and f32x4.sqrt do four.
;;
;; p, g, m, v: byte offsets in the imported memory of the parameters, gradients, first and
;; second moments (n floats each). Per value, as torch.optim.AdamW:
;;   g ← g·coef                      (global-norm clipping)
;;   m ← β₁·m + (1 − β₁)·g
;;   v ← β₂·v + (1 − β₂)·g²
;;   p ← p·decay − stepSize·m / (√v·invBc2 + ε)
;; decay = 1 − lr·weight decay; stepSize = lr / (1 − β₁ᵗ); invBc2 = 1 / √(1 − β₂ᵗ).
;; Vectors first, then the last n mod 4 values one by one (rows of any width).
;;
;; Edited here, then `npx tsx scripts/build-wasm.ts` regenerates ./adamw-wasm.ts; a unit test
;; checks that the two agree.
(module
  (import "env" "memory" (memory 1))
  (func (export "adamw")
    (param $p i32) (param $g i32) (param $m i32) (param $v i32) (param $n i32)
    (param $b1 f32) (param $b2 f32) (param $c1 f32) (param $c2 f32) (param $coef f32)
    (param $decay f32) (param $step f32) (param $invBc2 f32) (param $eps f32)
    (local $i i32) (local $end4 i32) (local $end i32)
    (local $B1 v128) (local $B2 v128) (local $C1 v128) (local $C2 v128) (local $CO v128)
    (local $DE v128) (local $ST v128) (local $IB v128) (local $EP v128)
    (local $gi v128) (local $mi v128) (local $vi v128)
    (local $gs f32) (local $ms f32) (local $vs f32)
    (local.set $B1 (f32x4.splat (local.get $b1)))
    (local.set $B2 (f32x4.splat (local.get $b2)))
    (local.set $C1 (f32x4.splat (local.get $c1)))
    (local.set $C2 (f32x4.splat (local.get $c2)))
    (local.set $CO (f32x4.splat (local.get $coef)))
    (local.set $DE (f32x4.splat (local.get $decay)))
    (local.set $ST (f32x4.splat (local.get $step)))
    (local.set $IB (f32x4.splat (local.get $invBc2)))
    (local.set $EP (f32x4.splat (local.get $eps)))
    ;; byte counts: whole vectors, then everything
    (local.set $end4 (i32.shl (i32.and (local.get $n) (i32.const -4)) (i32.const 2)))
    (local.set $end (i32.shl (local.get $n) (i32.const 2)))
    (block $vectors_done
      (loop $vectors
        (br_if $vectors_done (i32.ge_u (local.get $i) (local.get $end4)))
        (local.set $gi (f32x4.mul (v128.load (i32.add (local.get $g) (local.get $i))) (local.get $CO)))
        (local.set $mi
          (f32x4.add
            (f32x4.mul (local.get $B1) (v128.load (i32.add (local.get $m) (local.get $i))))
            (f32x4.mul (local.get $C1) (local.get $gi))))
        (local.set $vi
          (f32x4.add
            (f32x4.mul (local.get $B2) (v128.load (i32.add (local.get $v) (local.get $i))))
            (f32x4.mul (f32x4.mul (local.get $C2) (local.get $gi)) (local.get $gi))))
        (v128.store (i32.add (local.get $m) (local.get $i)) (local.get $mi))
        (v128.store (i32.add (local.get $v) (local.get $i)) (local.get $vi))
        (v128.store (i32.add (local.get $p) (local.get $i))
          (f32x4.sub
            (f32x4.mul (v128.load (i32.add (local.get $p) (local.get $i))) (local.get $DE))
            (f32x4.div
              (f32x4.mul (local.get $ST) (local.get $mi))
              (f32x4.add (f32x4.mul (f32x4.sqrt (local.get $vi)) (local.get $IB)) (local.get $EP)))))
        (local.set $i (i32.add (local.get $i) (i32.const 16)))
        (br $vectors)))
    (block $tail_done
      (loop $tail
        (br_if $tail_done (i32.ge_u (local.get $i) (local.get $end)))
        (local.set $gs (f32.mul (f32.load (i32.add (local.get $g) (local.get $i))) (local.get $coef)))
        (local.set $ms
          (f32.add
            (f32.mul (local.get $b1) (f32.load (i32.add (local.get $m) (local.get $i))))
            (f32.mul (local.get $c1) (local.get $gs))))
        (local.set $vs
          (f32.add
            (f32.mul (local.get $b2) (f32.load (i32.add (local.get $v) (local.get $i))))
            (f32.mul (f32.mul (local.get $c2) (local.get $gs)) (local.get $gs))))
        (f32.store (i32.add (local.get $m) (local.get $i)) (local.get $ms))
        (f32.store (i32.add (local.get $v) (local.get $i)) (local.get $vs))
        (f32.store (i32.add (local.get $p) (local.get $i))
          (f32.sub
            (f32.mul (f32.load (i32.add (local.get $p) (local.get $i))) (local.get $decay))
            (f32.div
              (f32.mul (local.get $step) (local.get $ms))
              (f32.add (f32.mul (f32.sqrt (local.get $vs)) (local.get $invBc2)) (local.get $eps)))))
        (local.set $i (i32.add (local.get $i) (i32.const 4)))
        (br $tail)))))
