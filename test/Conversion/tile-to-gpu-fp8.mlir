// RUN: tile-opt %s --split-input-file --convert-tile-to-gpu | FileCheck %s

// fp8 casts on sm_90: f32 -> fp8 is PTX cvt.rn.satfinite on register pairs
// (nvvm.convert.f32x2.to.f8x2; the first element of a pair is the second
// operand, the low byte; the pairs are the 16-bit lanes of the result, so
// that LLVM keeps each pair's bytes together), fp8 -> f32 is cvt.rn.f16x2.e4m3x2 then an exact
// f16 -> f32 widening.
#blocked = #tile.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
module attributes {tile.num_warps = 4 : i32} {
  // CHECK-LABEL: gpu.func @round_trip
  // CHECK: %[[V:.*]] = vector.from_elements %{{.*}} : vector<4xf32>
  // CHECK: %[[E0:.*]] = vector.extract %[[V]][0] : f32 from vector<4xf32>
  // CHECK: %[[E1:.*]] = vector.extract %[[V]][1] : f32 from vector<4xf32>
  // CHECK: %[[P0:.*]] = nvvm.convert.f32x2.to.f8x2 %[[E1]], %[[E0]] {rnd = #nvvm.fp_rnd_mode<rn>, sat = #nvvm.sat_mode<satfinite>} : i16(f8E4M3FN)
  // CHECK: %[[P1:.*]] = nvvm.convert.f32x2.to.f8x2
  // CHECK: %[[L:.*]] = vector.from_elements %[[P0]], %[[P1]] : vector<2xi16>
  // CHECK: %[[B:.*]] = vector.bitcast %[[L]] : vector<2xi16> to vector<4xi8>
  // CHECK: arith.bitcast %[[B]] : vector<4xi8> to vector<4xf8E4M3FN>
  // CHECK-NOT: arith.truncf
  // CHECK: nvvm.convert.f8x2.to.f16x2 %{{.*}} : vector<2xi8>(f8E4M3FN) -> vector<2xf16>
  // CHECK: arith.extf %{{.*}} : f16 to f32
  // CHECK: nvvm.convert.f8x2.to.f16x2
  // CHECK-NOT: arith.extf %{{.*}} : vector<4xf8E4M3FN>
  // CHECK: gpu.return
  func.func @round_trip(%x: !tile.array<?xf32, strides = [1], align = 16, div = 16>,
                        %o: !tile.array<?xf32, strides = [1], align = 16, div = 16>) attributes {tile.kernel} {
    %i = tile.bid 0
    %a = tile.load %x[%i] : !tile.array<?xf32, strides = [1], align = 16, div = 16> -> tensor<512xf32, #blocked>
    %b = arith.truncf %a : tensor<512xf32, #blocked> to tensor<512xf8E4M3FN, #blocked>
    %c = arith.extf %b : tensor<512xf8E4M3FN, #blocked> to tensor<512xf32, #blocked>
    tile.store %o[%i], %c : !tile.array<?xf32, strides = [1], align = 16, div = 16>, tensor<512xf32, #blocked>
    return
  }
}

// -----

// f64 -> e5m2 rounds from the f64 bits in integer code (through f32 would
// round twice). Two fp8 elements a thread stores go out as one b16 word
// holding both bytes.
#blocked = #tile.blocked<{sizePerThread = [2], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
module attributes {tile.num_warps = 4 : i32} {
  // CHECK-LABEL: gpu.func @from_f64
  // CHECK-NOT: nvvm.convert
  // CHECK: arith.bitcast %{{.*}} : vector<2xf64> to vector<2xi64>
  // CHECK: arith.minui %{{.*}} : vector<2xi64>
  // CHECK: %[[R:.*]] = arith.bitcast %{{.*}} : vector<2xi8> to vector<2xf8E5M2>
  // CHECK: %[[W:.*]] = vector.bitcast %{{.*}} : vector<2xf8E5M2> to vector<1xi16>
  // CHECK: %[[H:.*]] = vector.extract %[[W]][0] : i16 from vector<1xi16>
  // CHECK: tile.ptx.st_global %{{.*}}, %{{.*}}, %[[H]] : i16
  func.func @from_f64(%x: !tile.array<?xf64, strides = [1], align = 16, div = 16>,
                      %o: !tile.array<?xf8E5M2, strides = [1], align = 16, div = 16>) attributes {tile.kernel} {
    %i = tile.bid 0
    %a = tile.load %x[%i] : !tile.array<?xf64, strides = [1], align = 16, div = 16> -> tensor<256xf64, #blocked>
    %b = arith.truncf %a : tensor<256xf64, #blocked> to tensor<256xf8E5M2, #blocked>
    tile.store %o[%i], %b : !tile.array<?xf8E5M2, strides = [1], align = 16, div = 16>, tensor<256xf8E5M2, #blocked>
    return
  }
}

// -----

// One element a thread (an odd count): it is converted paired with itself
// and the copy dropped.
#blocked = #tile.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
module attributes {tile.num_warps = 4 : i32} {
  // CHECK-LABEL: gpu.func @odd_count
  // CHECK: nvvm.convert.f32x2.to.f8x2 %[[E:.*]], %[[E]] {{.*}} : i16(f8E4M3FN)
  // CHECK: %[[B:.*]] = vector.bitcast %{{.*}} : vector<1xi16> to vector<2xi8>
  // CHECK: %[[S:.*]] = vector.extract_strided_slice %[[B]] {offsets = [0], sizes = [1], strides = [1]} : vector<2xi8> to vector<1xi8>
  // CHECK: arith.bitcast %[[S]] : vector<1xi8> to vector<1xf8E4M3FN>
  func.func @odd_count(%x: !tile.array<?xf32, strides = [1], align = 16, div = 16>,
                       %o: !tile.array<?xf8E4M3FN, strides = [1], align = 16, div = 16>) attributes {tile.kernel} {
    %i = tile.bid 0
    %a = tile.load %x[%i] : !tile.array<?xf32, strides = [1], align = 16, div = 16> -> tensor<128xf32, #blocked>
    %b = arith.truncf %a : tensor<128xf32, #blocked> to tensor<128xf8E4M3FN, #blocked>
    tile.store %o[%i], %b : !tile.array<?xf8E4M3FN, strides = [1], align = 16, div = 16>, tensor<128xf8E4M3FN, #blocked>
    return
  }
}
