// RUN: tile-opt %s --verify-diagnostics -o /dev/null

func.func @umax_on_floats(%a: !tile.array<?xf32, strides = [1], align = 16>, %v: tensor<4xf32>) {
  %i = arith.constant dense<0> : tensor<4xi32>
  // expected-error @+1 {{umax/umin need an integer array, got 'f32'}}
  %r = tile.atomic_rmw umax %a[%i], %v : !tile.array<?xf32, strides = [1], align = 16>[tensor<4xi32>], tensor<4xf32>
  return
}
