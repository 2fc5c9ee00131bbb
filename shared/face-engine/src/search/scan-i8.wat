;; SIMD kernel of FaceIndex's fast path: int8 templates x int16 query dot products.
;; Built to scan-i8.wasm with `npx -p wabt@1.0.39 wat2wasm scan-i8.wat -o scan-i8.wasm`.
(module
  (memory (export "memory") 1)
  ;; out[r] = sum_j mat[r*d + j] * q[j]  for r in [0, n); mat: i8, q: i16, out: i32; d % 16 == 0.
  (func (export "scan") (param $mat i32) (param $q i32) (param $n i32) (param $d i32) (param $out i32)
    (local $r i32) (local $j i32) (local $acc v128) (local $v v128) (local $qp i32)
    (block $done
      (loop $rows
        (br_if $done (i32.ge_u (local.get $r) (local.get $n)))
        (local.set $acc (v128.const i32x4 0 0 0 0))
        (local.set $j (i32.const 0))
        (local.set $qp (local.get $q))
        (block $rowdone
          (loop $cols
            (br_if $rowdone (i32.ge_u (local.get $j) (local.get $d)))
            (local.set $v (v128.load (local.get $mat)))
            (local.set $acc (i32x4.add (local.get $acc)
              (i32x4.dot_i16x8_s (i16x8.extend_low_i8x16_s (local.get $v)) (v128.load (local.get $qp)))))
            (local.set $acc (i32x4.add (local.get $acc)
              (i32x4.dot_i16x8_s (i16x8.extend_high_i8x16_s (local.get $v)) (v128.load offset=16 (local.get $qp)))))
            (local.set $mat (i32.add (local.get $mat) (i32.const 16)))
            (local.set $qp (i32.add (local.get $qp) (i32.const 32)))
            (local.set $j (i32.add (local.get $j) (i32.const 16)))
            (br $cols)))
        (i32.store (local.get $out)
          (i32.add
            (i32.add (i32x4.extract_lane 0 (local.get $acc)) (i32x4.extract_lane 1 (local.get $acc)))
            (i32.add (i32x4.extract_lane 2 (local.get $acc)) (i32x4.extract_lane 3 (local.get $acc)))))
        (local.set $out (i32.add (local.get $out) (i32.const 4)))
        (local.set $r (i32.add (local.get $r) (i32.const 1)))
        (br $rows))))
)
