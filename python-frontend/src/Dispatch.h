//===- Dispatch.h - the C dispatcher's state, shared by its parts -*- C++
//-*-===//
//
// The dispatcher (`_tile.Dispatcher`, see Dispatch.cpp) in five files:
// Dispatch.cpp (the call), DispatchArgs.cpp (classifying arguments: their
// kind and tile dtype, memoized), DispatchKey.cpp (the compact
// specialization key and flat values), DispatchCache.cpp (compact key ->
// CompiledKernel), DispatchTypes.cpp (the CPython types and `addDispatcher`).
//
//===----------------------------------------------------------------------===//
#ifndef TILE_PY_DISPATCH_H
#define TILE_PY_DISPATCH_H

#include <Python.h>

#include <cstdint>
#include <vector>

namespace tile_py::dispatch {

enum Kind : uint64_t {
  kSlow = 0,
  kInt = 1,
  kFloat = 2,
  kBool = 3,
  kTorch = 4,
  kNumpy = 5,
  kCai = 6,
  kConst = 7,
};

constexpr Py_ssize_t kMaxParams = 64;
constexpr Py_ssize_t kMaxFlat = 512;
constexpr int kMaxRank = 32;
constexpr size_t kMaxEntries = 32;
constexpr size_t kMaxTypes = 64;
constexpr size_t kMaxDTypes = 256;
constexpr int kWords = 3; // compact key words per parameter

// Interned attribute names and small ints (Dispatch.cpp makes them).
extern PyObject *sIsCuda, *sDataPtr, *sShape, *sStride, *sDtype, *sCai, *sData,
    *sTypestr, *sStrides, *sStream, *sStreamFn, *sStreamOf, *sLaunch, *sGrid3,
    *sLaunchError, *sBinary, *sRawStream, *sCurDevice, *sClass, *sBinder,
    *sBuildLauncher, *sWatch, *sZero, *sOne;

struct TypeInfo {
  PyTypeObject *type; // owned
  uint64_t kind;
  int want; // torch: 1 must be on the GPU, 0 must not, 2 either
};

struct DTypeInfo {
  PyObject *src;  // owned: torch/NumPy dtype object
  PyObject *tile; // owned: tile DType
  int64_t itemsize;
};

struct Entry {
  std::vector<uint64_t> words;
  std::vector<PyObject *> objs; // owned Constants compared with ==, or null
  PyObject *ck;                 // owned CompiledKernel
  PyObject *watch = nullptr;    // owned: ck.watch (GlobalWatch.cpp)
  // The default stream (ck._stream_fn, fixed when ck is made): null for 0;
  // torch's two C functions when the getter names them, called directly.
  PyObject *streamFn = nullptr, *rawStream = nullptr, *curDevice = nullptr;
};

struct Impl {
  Py_ssize_t nparams = 0, npos = 0;
  std::vector<char> isConst;
  PyObject *names = nullptr;    // tuple of str
  PyObject *defaults = nullptr; // tuple; `missing` where there is none
  PyObject *missing = nullptr;
  PyObject *kindFn = nullptr; // x -> (kind, want)
  PyObject *dtypeFn =
      nullptr; // (kind, dtype or typestr) -> (DType, itemsize) | None
  PyObject *slow = nullptr; // the Python launcher; returns the CompiledKernel
  PyObject *caiDtypes = nullptr; // dict typestr -> (DType, itemsize)
  std::vector<TypeInfo> types;
  std::vector<DTypeInfo> dtypes;
  std::vector<Entry> entries;
  uint64_t generation = 0;
  PyObject *lastGrid = nullptr, *lastBound = nullptr;
  uint64_t hits = 0, misses = 0, slowCalls = 0;
};

/// The per-call scratch: the compact key and the flat argument values.
struct Work {
  PyObject *vals[kMaxParams];
  uint64_t words[kWords * kMaxParams];
  PyObject *objs[kMaxParams];
  PyObject *flat[kMaxFlat]; // owned
  Py_ssize_t nflat = 0;
  ~Work() {
    for (Py_ssize_t i = 0; i < nflat; ++i)
      Py_DECREF(flat[i]);
  }
  bool push(PyObject *o) { // steals
    if (!o)
      return false;
    if (nflat == kMaxFlat) {
      Py_DECREF(o);
      return false;
    }
    flat[nflat++] = o;
    return true;
  }
  bool pushBorrowed(PyObject *o) {
    Py_INCREF(o);
    return push(o);
  }
};

/// An owned reference that is released at scope exit.
struct Ref {
  PyObject *p;
  explicit Ref(PyObject *p = nullptr) : p(p) {}
  ~Ref() { Py_XDECREF(p); }
  Ref(const Ref &) = delete;
  Ref &operator=(const Ref &) = delete;
  operator PyObject *() const { return p; }
  explicit operator bool() const { return p != nullptr; }
};

// -- argument classification (DispatchArgs.cpp) -------------------------------

/// The kind of `v`'s type (memoized; im.kindFn decides), or null: take the
/// Python path.
const TypeInfo *typeInfo(Impl &im, PyObject *v);
/// The tile dtype of a torch/NumPy dtype object (by identity), or null.
const DTypeInfo *dtypeInfo(Impl &im, uint64_t kind, PyObject *dt);
/// The tile dtype of a __cuda_array_interface__ typestr (by value).
bool caiDType(Impl &im, PyObject *typestr, DTypeInfo &out);
/// Forget the memos of argument types and dtypes.
void clearTypes(Impl &im);
void clearDTypes(Impl &im);

// -- the specialization key (DispatchKey.cpp)
// ----------------------------------

/// Fills `w` with the compact key and the flat values of `w.vals`; false:
/// take the Python path (any error is cleared).
bool computeKey(Impl &im, Work &w);

// -- the dispatch cache (DispatchCache.cpp)
// ------------------------------------

/// How a hit launches: new references to the CompiledKernel and its
/// default stream's functions.
struct Hit {
  PyObject *ck = nullptr, *streamFn = nullptr, *rawStream = nullptr,
           *curDevice = nullptr;
  ~Hit() {
    Py_XDECREF(ck);
    Py_XDECREF(streamFn);
    Py_XDECREF(rawStream);
    Py_XDECREF(curDevice);
  }
};

/// Finds `w`'s key; false when it is not cached.
bool lookup(Impl &im, Work &w, Hit &hit);
/// Caches `ck` for `w`'s key; false with a Python error set.
bool insert(Impl &im, Work &w, PyObject *ck);
/// Forgets every entry (Kernel.cache changed).
void clearEntries(Impl &im);

// -- the globals a trace read (GlobalWatch.cpp) -------------------------------

/// 1 when a global that `watch` (tile/global_watch.py) records has been
/// rebound since, 0 when not, -1 with a Python error.
int globalsChanged(PyObject *watch);

// -- the call (Dispatch.cpp)
// ---------------------------------------------------

struct DispatcherObject {
  PyObject_HEAD vectorcallfunc vectorcall;
  Impl *impl;
};

struct BoundObject {
  PyObject_HEAD vectorcallfunc vectorcall;
  DispatcherObject *dispatcher;
  PyObject *grid;
  PyObject *grid3; // (x, y, z) when `grid` is a tuple of positive ints
};

/// (x, y, z) for a tuple of 1 to 3 positive exact ints within the grid
/// limits, else null (no error): CompiledKernel._grid3 handles the rest
/// and raises the errors.
PyObject *simpleGrid3(PyObject *grid);
/// `kernel[grid](*args, **kwargs)`: the launch, through the cache or the
/// Python launcher.
PyObject *dispatch(DispatcherObject *self, PyObject *grid, PyObject *grid3,
                   PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames);

} // namespace tile_py::dispatch

#endif // TILE_PY_DISPATCH_H
