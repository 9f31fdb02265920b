// RUN: tile-opt %s -tile-expand-f8 | FileCheck %s --check-prefix=EXPAND
// RUN: tile-opt %s -tile-expand-f8 -canonicalize | FileCheck %s --check-prefix=FOLD

// tile-expand-f8 writes fp8 casts as integer code on the bits (the CPU has no
// fp8 type). The FOLD run evaluates that code on constants: the canonicalizer
// folds it to the rounded value, so these pin the rounding itself (round to
// nearest even, satfinite, NaN stays NaN).

// EXPAND-LABEL: func @trunc_f32_e4m3
// EXPAND-NOT: arith.truncf
// EXPAND: arith.bitcast %{{.*}} : f32 to i32
// EXPAND: arith.minui
// EXPAND: %[[R:.*]] = arith.bitcast %{{.*}} : i8 to f8E4M3FN
// EXPAND: return %[[R]]
func.func @trunc_f32_e4m3(%x: f32) -> f8E4M3FN {
  %0 = arith.truncf %x : f32 to f8E4M3FN
  return %0 : f8E4M3FN
}

// EXPAND-LABEL: func @ext_e5m2_vector
// EXPAND-NOT: arith.extf %{{.*}} : vector<4xf8E5M2>
// EXPAND: arith.bitcast %{{.*}} : vector<4xf8E5M2> to vector<4xi8>
// EXPAND: arith.extui %{{.*}} : vector<4xi8> to vector<4xi32>
// EXPAND: arith.bitcast %{{.*}} : vector<4xi32> to vector<4xf32>
func.func @ext_e5m2_vector(%x: vector<4xf8E5M2>) -> vector<4xf32> {
  %0 = arith.extf %x : vector<4xf8E5M2> to vector<4xf32>
  return %0 : vector<4xf32>
}

// f16 sources widen to f32 first (exactly); f8 -> f16 narrows from f32
// (exact: every fp8 value is an f16).
// EXPAND-LABEL: func @via_f32
// EXPAND: arith.extf %{{.*}} : f16 to f32
// EXPAND: arith.truncf %{{.*}} : f32 to f16
func.func @via_f32(%x: f16) -> f16 {
  %0 = arith.truncf %x : f16 to f8E4M3FN
  %1 = arith.extf %0 : f8E4M3FN to f16
  return %1 : f16
}

// FOLD-LABEL: func @e4m3_rounding
// 464 is halfway between 448 (the largest finite) and 480 (none): satfinite.
// FOLD-DAG: %[[SAT:.*]] = arith.constant 4.480000e+02 : f8E4M3FN
// -inf saturates too.
// FOLD-DAG: %[[NSAT:.*]] = arith.constant -4.480000e+02 : f8E4M3FN
// 1.5 * 2^-9 is a tie between subnormals 2^-9 (odd) and 2^-8 (even).
// FOLD-DAG: %[[TIE:.*]] = arith.constant 3.906250e-03 : f8E4M3FN
// 2^-10 is a tie between 0 (even) and 2^-9: zero, with the sign kept.
// FOLD-DAG: %[[NZ:.*]] = arith.constant -0.000000e+00 : f8E4M3FN
// FOLD-DAG: %[[NAN:.*]] = arith.constant 0x7F : f8E4M3FN
// FOLD: return %[[SAT]], %[[NSAT]], %[[TIE]], %[[NZ]], %[[NAN]]
func.func @e4m3_rounding() -> (f8E4M3FN, f8E4M3FN, f8E4M3FN, f8E4M3FN, f8E4M3FN) {
  %a = arith.constant 464.0 : f32
  %b = arith.constant 0xFF800000 : f32
  %c = arith.constant 0.0029296875 : f32
  %d = arith.constant -0.0009765625 : f32
  %e = arith.constant 0x7FC00000 : f32
  %0 = arith.truncf %a : f32 to f8E4M3FN
  %1 = arith.truncf %b : f32 to f8E4M3FN
  %2 = arith.truncf %c : f32 to f8E4M3FN
  %3 = arith.truncf %d : f32 to f8E4M3FN
  %4 = arith.truncf %e : f32 to f8E4M3FN
  return %0, %1, %2, %3, %4 : f8E4M3FN, f8E4M3FN, f8E4M3FN, f8E4M3FN, f8E4M3FN
}

// f64 rounds from its own bits: 1.0625 + 2^-40 is just above the tie
// between 1.0 and 1.125 (going through f32 would round it to the tie, then
// to 1.0).
// FOLD-LABEL: func @f64_no_double_rounding
// FOLD: arith.constant 1.125000e+00 : f8E4M3FN
func.func @f64_no_double_rounding() -> f8E4M3FN {
  %a = arith.constant 1.0625000000009095 : f64
  %0 = arith.truncf %a : f64 to f8E4M3FN
  return %0 : f8E4M3FN
}

// e5m2 has infinities, but satfinite gives 57344 past the largest finite.
// FOLD-LABEL: func @e5m2_rounding
// FOLD-DAG: %[[SAT:.*]] = arith.constant 5.734400e+04 : f8E5M2
// FOLD-DAG: %[[UP:.*]] = arith.constant 1.250000e+00 : f8E5M2
// FOLD: return %[[SAT]], %[[UP]]
func.func @e5m2_rounding() -> (f8E5M2, f8E5M2) {
  %a = arith.constant 1.0e9 : f32
  %b = arith.constant 1.1875 : f32
  %0 = arith.truncf %a : f32 to f8E5M2
  %1 = arith.truncf %b : f32 to f8E5M2
  return %0, %1 : f8E5M2, f8E5M2
}

// Decoding: the smallest subnormal, e5m2's infinity, e4m3's NaN (0xff:
// its sign kept), -(1.75 * 2^13).
// FOLD-LABEL: func @decode
// FOLD-DAG: %[[SUB:.*]] = arith.constant 0.001953125 : f32
// FOLD-DAG: %[[INF:.*]] = arith.constant 0x7F800000 : f32
// FOLD-DAG: %[[NAN:.*]] = arith.constant 0xFFC00000 : f32
// FOLD-DAG: %[[NEG:.*]] = arith.constant -1.433600e+04 : f32
// FOLD: return %[[SUB]], %[[INF]], %[[NAN]], %[[NEG]]
func.func @decode() -> (f32, f32, f32, f32) {
  %a = arith.constant 0x01 : f8E4M3FN
  %b = arith.constant 0x7C : f8E5M2
  %c = arith.constant 0xFF : f8E4M3FN
  %d = arith.constant 0xF3 : f8E5M2
  %0 = arith.extf %a : f8E4M3FN to f32
  %1 = arith.extf %b : f8E5M2 to f32
  %2 = arith.extf %c : f8E4M3FN to f32
  %3 = arith.extf %d : f8E5M2 to f32
  return %0, %1, %2, %3 : f32, f32, f32, f32
}
