// RUN: tile-opt %s -split-input-file -verify-diagnostics | FileCheck %s
// The typed contract of TMA kernel arguments: an array the launch proved TMA
// can describe (tile.tma_ok) and a trailing tensor-map argument naming it
// (tilegpu.tensor_map_of). Prints and parses back; the verifiers' cases.

// CHECK-LABEL: func.func @contract
// CHECK-SAME: %{{.*}}: !tile.array<?x?xf16, strides = [?, 1], align = 16> {tile.tma_ok}
// CHECK-SAME: %{{.*}}: i32
// CHECK-SAME: %{{.*}}: !tilegpu.tensor_map<128x64xf16, swizzle = 128> {tilegpu.tensor_map_of = #tilegpu.tensor_map_of<array = 0>}
func.func @contract(%a: !tile.array<?x?xf16, strides = [?, 1], align = 16> {tile.tma_ok},
                    %n: i32,
                    %map: !tilegpu.tensor_map<128x64xf16, swizzle = 128>
                        {tilegpu.tensor_map_of = #tilegpu.tensor_map_of<array = 0>}) {
  return
}

// -----

// A rank-3 array (a batch dimension) has a rank-3 box.
// CHECK-LABEL: func.func @batched
func.func @batched(%a: !tile.array<?x?x?xbf16, strides = [?, ?, 1], align = 16> {tile.tma_ok},
                   %map: !tilegpu.tensor_map<1x64x64xbf16, swizzle = 128>
                       {tilegpu.tensor_map_of = #tilegpu.tensor_map_of<array = 0>}) {
  return
}

// -----

// expected-error @+1 {{"tile.tma_ok" needs an array of rank 1 to 5 whose inner stride alone is 1 and whose alignment is 16}}
func.func @unaligned(%a: !tile.array<?x?xf16, strides = [?, 1], align = 2> {tile.tma_ok}) {
  return
}

// -----

// expected-error @+1 {{"tile.tma_ok" needs an array of rank 1 to 5 whose inner stride alone is 1}}
func.func @transposed(%a: !tile.array<?x?xf16, align = 16> {tile.tma_ok}) {
  return
}

// -----

// expected-error @+1 {{"tile.tma_ok" marks array arguments of functions}}
func.func @scalar(%n: i32 {tile.tma_ok}) {
  return
}

// -----

// expected-error @+1 {{describes array argument 0, which is not marked tile.tma_ok}}
func.func @unmarked(%a: !tile.array<?x?xf16, strides = [?, 1], align = 16>,
                    %map: !tilegpu.tensor_map<128x64xf16, swizzle = 128>
                        {tilegpu.tensor_map_of = #tilegpu.tensor_map_of<array = 0>}) {
  return
}

// -----

// expected-error @+1 {{names argument 1, which is not an array}}
func.func @not_an_array(%a: !tile.array<?x?xf16, strides = [?, 1], align = 16> {tile.tma_ok},
                        %map: !tilegpu.tensor_map<128x64xf16, swizzle = 128>
                            {tilegpu.tensor_map_of = #tilegpu.tensor_map_of<array = 1>}) {
  return
}

// -----

// expected-error @+1 {{tensor maps come last}}
func.func @order(%a: !tile.array<?x?xf16, strides = [?, 1], align = 16> {tile.tma_ok},
                 %map: !tilegpu.tensor_map<128x64xf16, swizzle = 128>
                     {tilegpu.tensor_map_of = #tilegpu.tensor_map_of<array = 0>},
                 %n: i32) {
  return
}

// -----

// expected-error @+1 {{box has 3 dimensions, its array 2}}
func.func @rank(%a: !tile.array<?x?xf16, strides = [?, 1], align = 16> {tile.tma_ok},
                %map: !tilegpu.tensor_map<1x128x64xf16, swizzle = 128>
                    {tilegpu.tensor_map_of = #tilegpu.tensor_map_of<array = 0>}) {
  return
}

// -----

// expected-error @+1 {{moves 'f32', its array holds 'f16'}}
func.func @width(%a: !tile.array<?x?xf16, strides = [?, 1], align = 16> {tile.tma_ok},
                 %map: !tilegpu.tensor_map<128x32xf32, swizzle = 128>
                     {tilegpu.tensor_map_of = #tilegpu.tensor_map_of<array = 0>}) {
  return
}

// -----

// expected-error @+1 {{marks a !tilegpu.tensor_map argument, not 'i32'}}
func.func @on_a_scalar(%n: i32 {tilegpu.tensor_map_of = #tilegpu.tensor_map_of<array = 0>}) {
  return
}
