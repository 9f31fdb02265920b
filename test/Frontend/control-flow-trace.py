# The traced tile IR of runtime control flow (docs/internals.md sections 1 and 6):
# each construct becomes scf.if / scf.while / scf.for with the values it carries.
# RUN: %tilec %s::branches --args "f32[1024], f32[1024], i32" -D B=256 --emit tile \
# RUN:   | FileCheck %s --check-prefix=IF
# RUN: %tilec %s::loops --args "f32[1024], f32[1024], i32" -D B=256 --emit tile \
# RUN:   | FileCheck %s --check-prefix=LOOP
import tile


@tile.kernel
def branches(x, out, n, B: tile.Constant[int]):
    t = tile.load(x, index=(0,), shape=(B,))
    if n > 3:
        t = t * 2.0
        s = 1
    elif n > 1:
        s = 2
    else:
        s = 3
    m = n if n > 0 else 0
    tile.store(out, index=(0,), tile=t + s + m)

# IF-LABEL: func.func @branches
# IF: %[[C:.*]] = arith.cmpi sgt, %{{.*}}, %{{.*}} : i32
# IF: %[[R:.*]]:2 = scf.if %[[C]] -> (tensor<256xf32>, i32) {
# IF: arith.mulf
# IF: scf.yield %{{.*}}, %{{.*}} : tensor<256xf32>, i32
# IF: } else {
# The elif is an scf.if nested in the else region, yielding the same types.
# IF: scf.if %{{.*}} -> (i32) {
# IF: scf.yield %{{.*}}, %{{.*}} : tensor<256xf32>, i32
# The conditional expression: one i32 result.
# IF: scf.if %{{.*}} -> (i32) {
# IF: tile.store


@tile.kernel
def loops(x, out, n, B: tile.Constant[int]):
    acc = tile.zeros((B,), tile.float32)
    j = 0
    while j < n:
        acc = acc + tile.load(x, index=(j,), shape=(B,))
        j += 1
    for i in range(n):
        if i == 2:
            continue
        if i > 5:
            break
        acc = acc + 1.0
    tile.store(out, index=(0,), tile=acc)

# LOOP-LABEL: func.func @loops
# The while: before region tests the condition and forwards the carried values.
# LOOP: %{{.*}}:2 = scf.while (%[[A:.*]] = %{{.*}}, %[[J:.*]] = %{{.*}}) : (tensor<256xf32>, i32) -> (tensor<256xf32>, i32) {
# LOOP: %[[LT:.*]] = arith.cmpi slt, %[[J]], %{{.*}} : i32
# LOOP: scf.condition(%[[LT]]) %[[A]], %[[J]] : tensor<256xf32>, i32
# LOOP: } do {
# LOOP: ^bb0(%{{.*}}: tensor<256xf32>, %{{.*}}: i32):
# LOOP: scf.yield %{{.*}}, %{{.*}} : tensor<256xf32>, i32
# The range with break is an scf.while over (index, break flag, tile); its
# condition is false once the flag is set, without testing the bound again.
# LOOP: scf.while ({{.*}}) : (i32, i1, tensor<256xf32>) -> (i32, i1, tensor<256xf32>) {
# LOOP: scf.if %{{.*}} -> (i1) {
# LOOP: scf.condition(%{{.*}}) %{{.*}}, %{{.*}}, %{{.*}} : i32, i1, tensor<256xf32>
# LOOP: } do {
# continue guards the rest of the body: an scf.if carrying the flag and the tile.
# LOOP: scf.if %{{.*}} -> (i1, tensor<256xf32>) {
# LOOP: tile.store
