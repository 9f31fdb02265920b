//===- TileGpuTypes.td - tilegpu types -----------------------*- tablegen -*-===//
#ifndef TILEGPU_TYPES_TD
#define TILEGPU_TYPES_TD

include "dialects/tilegpu/TileGpuDialect.td"

def TileGpu_SharedBufferType : TileGpu_Type<"SharedBuffer", "shared"> {
  let summary = "a ring of 2-d blocks in shared memory";
  let description = [{
    `slots` blocks of `shape` elements, one after the other. A block is
    stored either as `swizzle`-byte swizzled panels (64 or 128: the layout
    wgmma reads; each panel `swizzle` bytes wide and as tall as the block,
    16-byte chunk c of row r at chunk c ^ (r % 8) for 128, c ^ ((r / 2) % 4)
    for 64), or row-major with `row_stride` elements per row (padded rows,
    whose ldmatrix addresses fall in distinct banks), or densely row-major
    when neither is given. A one-slot buffer is one block: what `slot`
    returns and what copies and mmas take.

    ```mlir
    !tilegpu.shared<128x64xf16, slots = 4, swizzle = 128>
    !tilegpu.shared<32x128xf16, slots = 3, row_stride = 136>
    ```
  }];
  let parameters = (ins ArrayRefParameter<"int64_t", "block shape">:$shape,
                        "Type":$elementType, "int64_t":$slots,
                        "int64_t":$swizzle, "int64_t":$rowStride);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    int64_t getRows() const { return getShape()[0]; }
    int64_t getCols() const { return getShape()[1]; }
    /// Elements from one row's start to the next's (padded rows: row_stride).
    int64_t getRowPitch() const {
      return getRowStride() ? getRowStride() : getCols();
    }
    /// Bytes of one element in memory.
    int64_t getElementBytes() const;
    /// Bytes of one block (16-byte aligned).
    int64_t getSlotBytes() const;
    int64_t getTotalBytes() const { return getSlots() * getSlotBytes(); }
    /// The alignment the layout needs: the swizzle pattern is computed on
    /// address bits 4..9, so swizzled blocks start at 1024 bytes; TMA
    /// copies dense blocks to and from 128-byte aligned addresses only (a
    /// misaligned one faults); padded rows, which only ldmatrix and vector
    /// accesses touch, need 16.
    int64_t getAlignment() const {
      return getSwizzle() ? 1024 : getRowStride() ? 16 : 128;
    }
    /// The same buffer with `n` slots.
    SharedBufferType withSlots(int64_t n) const;
  }];
}

def TileGpu_TokenType : TileGpu_Type<"Token", "token"> {
  let summary = "completion of a group of asynchronous copies";
  let description = [{
    Returned by `async_copy` and `async_group`; `async_wait` on a token
    makes the copies it stands for visible to the waiting thread.
  }];
}

def TileGpu_MBarriersType : TileGpu_Type<"MBarriers", "mbarriers"> {
  let summary = "a ring of mbarriers in shared memory";
  let description = [{
    `count` 8-byte mbarrier objects (one per ring slot: full or empty),
    allocated like a shared buffer and indexed by `mbarrier_*` ops.

    ```mlir
    !tilegpu.mbarriers<4>
    ```
  }];
  let parameters = (ins "int64_t":$count);
  let assemblyFormat = "`<` $count `>`";
  let genVerifyDecl = 1;
}

def TileGpu_TensorMapType : TileGpu_Type<"TensorMap", "tensor_map"> {
  let summary = "a TMA descriptor of a global array";
  let description = [{
    A CUtensorMap the runtime encodes for a kernel argument: the box a TMA
    copy moves (`box` elements, innermost last) and the swizzle of its
    shared-memory side (0, 32, 64 or 128 bytes). Passed as a
    `__grid_constant__` parameter; lowers to its generic address.

    ```mlir
    !tilegpu.tensor_map<128x64xf16, swizzle = 128>
    ```
  }];
  let parameters = (ins ArrayRefParameter<"int64_t", "box shape">:$box,
                        "Type":$elementType, "int64_t":$swizzle);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
}

#endif // TILEGPU_TYPES_TD
