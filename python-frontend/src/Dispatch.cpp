//===- Dispatch.cpp - the launch hot path of `kernel[grid](...)` ----------===//
//
// `_tile.Dispatcher` does per call what kernel.py's generated launcher does
// (bind the arguments, compute the specialization key, find the compiled
// kernel, build the flat argument tuple, pick the stream, launch), in C and
// with a dispatch cache of its own keyed on a compact form of the key:
//
// - a non-Constant argument contributes its kind (int/float/bool/torch/
//   NumPy/CUDA array interface), for ints the spec's class ("one", i32,
//   i32d16, ...), for arrays the tile dtype, rank, unit-stride mask, 16-byte
//   alignment of pointer and strides, and extents % 16: exactly what the
//   Python key part holds (interop.py), so equal compact keys mean equal
//   Python keys;
// - a Constant contributes its class and its value (ints and bools by value,
//   others by hash and then ==, as the Python dict compares keys).
//
// Everything else goes through the Python launcher (`slow`), which is the
// reference behaviour: a compact key seen for the first time, any argument
// of another kind (NumPy scalars, DLPack, unsupported types), missing or
// extra arguments, anything that raises. `slow` launches and returns the
// CompiledKernel it used, which is then cached under the compact key; so
// every error message, every compile and every first launch is the Python
// path's. kernel.py clears this cache when an entry of `Kernel.cache` is
// replaced or removed.
//
// Kernel objects stay generic: the launch goes through the CompiledKernel's
// `_launch(grid3, flat, stream)`, so the Python tests' stand-in kernels run
// through this path as well. When `_launch` is `_tile.Kernel.fast_launch`
// (the usual case), the Kernel is called directly with the flat values.
//
//===----------------------------------------------------------------------===//
#include "Kernel.h"

#include <Python.h>

#include <cstdint>
#include <cstring>
#include <vector>

namespace {

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

PyObject *sIsCuda, *sDataPtr, *sShape, *sStride, *sDtype, *sCai, *sData,
    *sTypestr, *sStrides, *sStream, *sStreamFn, *sStreamOf, *sLaunch, *sGrid3,
    *sLaunchError, *sBinary, *sRawStream, *sCurDevice, *sClass, *sBinder,
    *sBuildLauncher, *sZero, *sOne;

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
  PyObject *kindFn = nullptr;   // x -> (kind, want)
  PyObject *dtypeFn = nullptr;  // (kind, dtype or typestr) -> (DType, itemsize) | None
  PyObject *slow = nullptr;     // the Python launcher; returns the CompiledKernel
  PyObject *caiDtypes = nullptr; // dict typestr -> (DType, itemsize)
  std::vector<TypeInfo> types;
  std::vector<DTypeInfo> dtypes;
  std::vector<Entry> entries;
  uint64_t generation = 0;
  PyObject *lastGrid = nullptr, *lastBound = nullptr;
  uint64_t hits = 0, misses = 0, slowCalls = 0;
};

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

extern PyTypeObject DispatcherType;
extern PyTypeObject BoundType;

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

// -- classification ---------------------------------------------------------

// The memos are swapped out before their references go (as clearEntries
// does): a DECREF may run code that calls the dispatcher again.
void clearTypes(Impl &im) {
  std::vector<TypeInfo> old;
  old.swap(im.types);
  for (TypeInfo &t : old)
    Py_DECREF(t.type);
}

void clearDTypes(Impl &im) {
  std::vector<DTypeInfo> old;
  old.swap(im.dtypes);
  for (DTypeInfo &d : old) {
    Py_DECREF(d.src);
    Py_DECREF(d.tile);
  }
}

const TypeInfo *typeInfo(Impl &im, PyObject *v) {
  PyTypeObject *t = Py_TYPE(v);
  for (const TypeInfo &ti : im.types)
    if (ti.type == t)
      return &ti;
  Ref r(PyObject_CallOneArg(im.kindFn, v));
  if (!r || !PyTuple_Check(r.p) || PyTuple_GET_SIZE(r.p) != 2)
    return nullptr;
  long kind = PyLong_AsLong(PyTuple_GET_ITEM(r.p, 0));
  long want = PyLong_AsLong(PyTuple_GET_ITEM(r.p, 1));
  if (PyErr_Occurred())
    return nullptr;
  if (im.types.size() >= kMaxTypes)
    clearTypes(im);
  Py_INCREF(t);
  im.types.push_back({t, uint64_t(kind), int(want)});
  return &im.types.back();
}

bool setDType(DTypeInfo &info, PyObject *r) {
  if (!r || !PyTuple_Check(r) || PyTuple_GET_SIZE(r) != 2)
    return false;
  info.tile = PyTuple_GET_ITEM(r, 0);
  info.itemsize = PyLong_AsLongLong(PyTuple_GET_ITEM(r, 1));
  return !(info.itemsize <= 0 || PyErr_Occurred());
}

/// The tile dtype of a torch/NumPy dtype object (by identity).
const DTypeInfo *dtypeInfo(Impl &im, uint64_t kind, PyObject *dt) {
  for (const DTypeInfo &d : im.dtypes)
    if (d.src == dt)
      return &d;
  Ref kindObj(PyLong_FromUnsignedLongLong(kind));
  if (!kindObj)
    return nullptr;
  Ref r(PyObject_CallFunctionObjArgs(im.dtypeFn, kindObj.p, dt, nullptr));
  DTypeInfo info{dt, nullptr, 0};
  if (!setDType(info, r.p))
    return nullptr;
  if (im.dtypes.size() >= kMaxDTypes)
    clearDTypes(im);
  Py_INCREF(info.src);
  Py_INCREF(info.tile);
  im.dtypes.push_back(info);
  return &im.dtypes.back();
}

/// The tile dtype of a __cuda_array_interface__ typestr (by value).
bool caiDType(Impl &im, PyObject *typestr, DTypeInfo &out) {
  if (!PyUnicode_CheckExact(typestr))
    return false;
  PyObject *hit = PyDict_GetItemWithError(im.caiDtypes, typestr);
  if (!hit) {
    if (PyErr_Occurred() || PyDict_GET_SIZE(im.caiDtypes) > 256)
      return false;
    Ref kindObj(PyLong_FromUnsignedLongLong(kCai));
    if (!kindObj)
      return false;
    Ref r(PyObject_CallFunctionObjArgs(im.dtypeFn, kindObj.p, typestr,
                                       nullptr));
    if (!setDType(out, r.p))
      return false;
    if (PyDict_SetItem(im.caiDtypes, typestr, r.p) < 0)
      return false;
    return true;
  }
  return setDType(out, hit);
}

// -- key parts ----------------------------------------------------------------

bool asInt64(PyObject *o, int64_t &v) {
  if (!PyLong_CheckExact(o))
    return false;
  int overflow = 0;
  long long x = PyLong_AsLongLongAndOverflow(o, &overflow);
  if (overflow || (x == -1 && PyErr_Occurred()))
    return false;
  v = x;
  return true;
}

/// An array's key words and flat values (interop._array_parts). `shape`
/// holds the extents' objects; `strides` the strides in elements (owned,
/// already converted) or null with `stridesBorrowed` set.
bool arrayPart(Work &w, Py_ssize_t i, uint64_t kind, PyObject *ptrObj,
               uint64_t ptr, PyObject *const *shape, PyObject *const *strides,
               Py_ssize_t ndim, const PyObject *tileDtype, int64_t itemsize) {
  if (ndim > kMaxRank)
    return false;
  uint64_t mask = 0;
  bool ok16 = true, div = true;
  for (Py_ssize_t d = 0; d < ndim; ++d) {
    int64_t n, s;
    if (!asInt64(shape[d], n) || !asInt64(strides[d], s))
      return false;
    if (s == 1)
      mask |= uint64_t(1) << d;
    else if ((uint64_t(s) * uint64_t(itemsize)) & 15)
      ok16 = false;
    if (n & 15)
      div = false;
  }
  bool aligned = (ptr & 15) == 0;
  w.words[kWords * i] = kind | uint64_t(ndim) << 8 |
                        uint64_t(ok16 && aligned) << 16 | uint64_t(div) << 17;
  w.words[kWords * i + 1] = reinterpret_cast<uintptr_t>(tileDtype);
  w.words[kWords * i + 2] = mask;
  if (!w.pushBorrowed(ptrObj))
    return false;
  for (Py_ssize_t d = 0; d < ndim; ++d)
    if (!w.pushBorrowed(shape[d]))
      return false;
  for (Py_ssize_t d = 0; d < ndim; ++d)
    if (!w.pushBorrowed(strides[d]))
      return false;
  return true;
}

bool torchPart(Impl &im, Work &w, Py_ssize_t i, PyObject *v, int want) {
  if (want != 2) {
    Ref isCuda(PyObject_GetAttr(v, sIsCuda));
    if (!isCuda || isCuda.p != (want ? Py_True : Py_False))
      return false;
  }
  Ref ptrObj(PyObject_CallMethodNoArgs(v, sDataPtr));
  if (!ptrObj || !PyLong_CheckExact(ptrObj.p))
    return false;
  uint64_t ptr = PyLong_AsUnsignedLongLongMask(ptrObj.p);
  if (PyErr_Occurred())
    return false;
  Ref shape(PyObject_GetAttr(v, sShape));
  if (!shape || !PyTuple_Check(shape.p))
    return false;
  Ref st(PyObject_CallMethodNoArgs(v, sStride));
  if (!st || !PyTuple_Check(st.p) ||
      PyTuple_GET_SIZE(st.p) != PyTuple_GET_SIZE(shape.p))
    return false;
  Ref dt(PyObject_GetAttr(v, sDtype));
  if (!dt)
    return false;
  const DTypeInfo *info = dtypeInfo(im, kTorch, dt.p);
  if (!info)
    return false;
  PyObject *tileDtype = info->tile;
  int64_t itemsize = info->itemsize;
  return arrayPart(w, i, kTorch, ptrObj.p, ptr,
                   &PyTuple_GET_ITEM(shape.p, 0), &PyTuple_GET_ITEM(st.p, 0),
                   PyTuple_GET_SIZE(shape.p), tileDtype, itemsize);
}

bool numpyPart(Impl &im, Work &w, Py_ssize_t i, PyObject *v) {
  Ref dt(PyObject_GetAttr(v, sDtype));
  if (!dt)
    return false;
  const DTypeInfo *info = dtypeInfo(im, kNumpy, dt.p);
  if (!info)
    return false;
  PyObject *tileDtype = info->tile;
  int64_t tileItemsize = info->itemsize;
  Py_buffer view;
  if (PyObject_GetBuffer(v, &view, PyBUF_STRIDES) < 0)
    return false;
  struct Release {
    Py_buffer *v;
    ~Release() { PyBuffer_Release(v); }
  } release{&view};
  Py_ssize_t ndim = view.ndim;
  if (ndim > kMaxRank || view.itemsize <= 0 || (ndim && !view.shape))
    return false;
  PyObject *shape[kMaxRank], *strides[kMaxRank];
  Py_ssize_t made = 0;
  struct Drop {
    PyObject **a, **b;
    Py_ssize_t *n;
    ~Drop() {
      for (Py_ssize_t k = 0; k < *n; ++k) {
        Py_XDECREF(a[k]);
        Py_XDECREF(b[k]);
      }
    }
  } drop{shape, strides, &made};
  for (Py_ssize_t d = 0; d < ndim; ++d) {
    Py_ssize_t sb = view.strides ? view.strides[d] : 0;
    if (!view.strides) { // C-contiguous
      sb = view.itemsize;
      for (Py_ssize_t e = d + 1; e < ndim; ++e)
        sb *= view.shape[e];
    }
    if (sb % view.itemsize)
      return false; // the Python path names the argument
    shape[d] = PyLong_FromSsize_t(view.shape[d]);
    strides[d] = PyLong_FromSsize_t(sb / view.itemsize);
    made = d + 1;
    if (!shape[d] || !strides[d])
      return false;
  }
  Ref ptrObj(PyLong_FromVoidPtr(view.buf));
  if (!ptrObj)
    return false;
  return arrayPart(w, i, kNumpy, ptrObj.p, uint64_t(uintptr_t(view.buf)),
                   shape, strides, ndim, tileDtype, tileItemsize);
}

bool caiPart(Impl &im, Work &w, Py_ssize_t i, PyObject *v) {
  Ref d(PyObject_GetAttr(v, sCai));
  if (!d || !PyDict_Check(d.p))
    return false;
  PyObject *data = PyDict_GetItemWithError(d.p, sData);
  PyObject *shapeObj = PyDict_GetItemWithError(d.p, sShape);
  PyObject *typestr = PyDict_GetItemWithError(d.p, sTypestr);
  if (!data || !shapeObj || !typestr || !PyTuple_Check(data) ||
      PyTuple_GET_SIZE(data) < 1 || !PyLong_CheckExact(PyTuple_GET_ITEM(data, 0)))
    return false;
  PyObject *ptrObj = PyTuple_GET_ITEM(data, 0);
  uint64_t ptr = PyLong_AsUnsignedLongLongMask(ptrObj);
  if (PyErr_Occurred())
    return false;
  DTypeInfo info{};
  if (!caiDType(im, typestr, info))
    return false;
  Ref shape(PySequence_Fast(shapeObj, "shape"));
  if (!shape)
    return false;
  Py_ssize_t ndim = PySequence_Fast_GET_SIZE(shape.p);
  if (ndim > kMaxRank)
    return false;
  PyObject *const *ext = PySequence_Fast_ITEMS(shape.p);
  PyObject *stridesObj = PyDict_GetItemWithError(d.p, sStrides);
  if (!stridesObj && PyErr_Occurred())
    return false;
  PyObject *strides[kMaxRank];
  Py_ssize_t made = 0;
  struct Drop {
    PyObject **a;
    Py_ssize_t *n;
    ~Drop() {
      for (Py_ssize_t k = 0; k < *n; ++k)
        Py_XDECREF(a[k]);
    }
  } drop{strides, &made};
  if (!stridesObj || stridesObj == Py_None) { // C-contiguous
    int64_t acc[kMaxRank];
    int64_t prod = 1;
    for (Py_ssize_t k = ndim - 1; k >= 0; --k) {
      int64_t n;
      if (!asInt64(ext[k], n))
        return false;
      acc[k] = prod;
      if (__builtin_mul_overflow(prod, n, &prod))
        return false;
    }
    for (Py_ssize_t k = 0; k < ndim; ++k) {
      strides[k] = PyLong_FromLongLong(acc[k]);
      made = k + 1;
      if (!strides[k])
        return false;
    }
  } else {
    Ref st(PySequence_Fast(stridesObj, "strides"));
    if (!st || PySequence_Fast_GET_SIZE(st.p) != ndim)
      return false;
    for (Py_ssize_t k = 0; k < ndim; ++k) {
      int64_t s;
      if (!asInt64(PySequence_Fast_GET_ITEM(st.p, k), s) || s % info.itemsize)
        return false;
      strides[k] = PyLong_FromLongLong(s / info.itemsize);
      made = k + 1;
      if (!strides[k])
        return false;
    }
  }
  return arrayPart(w, i, kCai, ptrObj, ptr, ext, strides, ndim, info.tile,
                   info.itemsize);
}

/// Fills `w` with the compact key and the flat values; false: take the
/// Python path (any error is cleared).
bool computeKey(Impl &im, Work &w) {
  for (Py_ssize_t i = 0; i < im.nparams; ++i) {
    PyObject *v = w.vals[i];
    uint64_t *word = &w.words[kWords * i];
    w.objs[i] = nullptr;
    if (im.isConst[i]) {
      PyTypeObject *t = Py_TYPE(v);
      word[0] = kConst;
      word[1] = reinterpret_cast<uintptr_t>(t);
      int64_t x;
      if (t == &PyBool_Type) {
        word[2] = v == Py_True;
      } else if (t == &PyLong_Type && asInt64(v, x)) {
        word[2] = uint64_t(x);
      } else {
        PyErr_Clear();
        // The Python key holds (v.__class__, v): a proxy whose __class__
        // is not its type is left to it.
        if (t != &PyFloat_Type && t != &PyUnicode_Type && t != &PyTuple_Type &&
            t != &PyLong_Type && v != Py_None) {
          Ref cls(PyObject_GetAttr(v, sClass));
          if (cls.p != reinterpret_cast<PyObject *>(t))
            return false;
        }
        Py_hash_t h = PyObject_Hash(v);
        if (h == -1)
          return false; // unhashable: the Python path names it
        // As in a dict: equal hashes first, then ==.
        word[0] = kConst | uint64_t(1) << 8;
        word[2] = uint64_t(h);
        w.objs[i] = v;
      }
      continue;
    }
    PyTypeObject *t = Py_TYPE(v);
    uint64_t kind;
    int want = 2;
    if (t == &PyLong_Type)
      kind = kInt;
    else if (t == &PyFloat_Type)
      kind = kFloat;
    else if (t == &PyBool_Type)
      kind = kBool;
    else {
      const TypeInfo *ti = typeInfo(im, v);
      if (!ti)
        return false;
      kind = ti->kind;
      want = ti->want;
    }
    word[1] = word[2] = 0;
    switch (kind) {
    case kInt: {
      int overflow = 0;
      long long x = PyLong_AsLongLongAndOverflow(v, &overflow);
      if (overflow || (x == -1 && PyErr_Occurred()))
        return false;
      uint64_t cls;
      if (x == 1) {
        cls = 0; // "one": specialized away, not passed
      } else {
        bool i32 = x >= INT32_MIN && x <= INT32_MAX;
        cls = (i32 ? 1 : 3) + ((x & 15) ? 0 : 1);
        if (!w.pushBorrowed(v))
          return false;
      }
      word[0] = kInt | cls << 8;
      break;
    }
    case kFloat:
      word[0] = kFloat;
      if (!w.pushBorrowed(v))
        return false;
      break;
    case kBool:
      word[0] = kBool;
      if (!w.pushBorrowed(v == Py_True ? sOne : sZero))
        return false;
      break;
    case kTorch:
      if (!torchPart(im, w, i, v, want))
        return false;
      break;
    case kNumpy:
      if (!numpyPart(im, w, i, v))
        return false;
      break;
    case kCai:
      if (!caiPart(im, w, i, v))
        return false;
      break;
    default:
      return false;
    }
  }
  return true;
}

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
bool lookup(Impl &im, Work &w, Hit &hit) {
  size_t nwords = size_t(kWords * im.nparams);
  for (size_t e = 0; e < im.entries.size(); ++e) {
    Entry &entry = im.entries[e];
    if (std::memcmp(entry.words.data(), w.words, nwords * sizeof(uint64_t)))
      continue;
    bool same = true;
    uint64_t gen = im.generation;
    for (Py_ssize_t i = 0; same && i < im.nparams; ++i) {
      if (!w.objs[i])
        continue;
      PyObject *mine = im.entries[e].objs[size_t(i)];
      Py_INCREF(mine);
      int eq = PyObject_RichCompareBool(mine, w.objs[i], Py_EQ);
      Py_DECREF(mine);
      if (eq < 0)
        PyErr_Clear();
      same = eq == 1;
      if (im.generation != gen) // __eq__ changed the cache
        return false;
    }
    if (!same)
      continue;
    Entry &found = im.entries[e];
    PyObject **out[] = {&hit.ck, &hit.streamFn, &hit.rawStream, &hit.curDevice};
    PyObject *in[] = {found.ck, found.streamFn, found.rawStream, found.curDevice};
    for (int k = 0; k < 4; ++k) {
      Py_XINCREF(in[k]);
      *out[k] = in[k];
    }
    return true;
  }
  return false;
}

void dropEntry(Entry &e) {
  for (PyObject *o : e.objs)
    Py_XDECREF(o);
  Py_XDECREF(e.ck);
  Py_XDECREF(e.streamFn);
  Py_XDECREF(e.rawStream);
  Py_XDECREF(e.curDevice);
}

void clearEntries(Impl &im) {
  std::vector<Entry> old;
  old.swap(im.entries);
  ++im.generation;
  for (Entry &e : old)
    dropEntry(e);
}

/// Caches `ck` for `w`'s key; false with a Python error set.
bool insert(Impl &im, Work &w, PyObject *ck) {
  Ref sf(PyObject_GetAttr(ck, sStreamFn));
  if (!sf)
    return false;
  Entry e;
  if (sf.p != Py_None) {
    Py_INCREF(sf.p);
    e.streamFn = sf.p;
    e.rawStream = PyObject_GetAttr(sf.p, sRawStream);
    e.curDevice = e.rawStream ? PyObject_GetAttr(sf.p, sCurDevice) : nullptr;
    if (!e.curDevice) {
      PyErr_Clear();
      Py_CLEAR(e.rawStream);
    }
  }
  e.words.assign(w.words, w.words + kWords * im.nparams);
  e.objs.assign(w.objs, w.objs + im.nparams);
  for (PyObject *o : e.objs)
    Py_XINCREF(o);
  Py_INCREF(ck);
  e.ck = ck;
  ++im.generation;
  if (im.entries.size() >= kMaxEntries) {
    Entry first = std::move(im.entries.front());
    im.entries.erase(im.entries.begin());
    dropEntry(first);
  }
  im.entries.push_back(std::move(e));
  return true;
}

// -- the call ------------------------------------------------------------------

/// (x, y, z) for a tuple of 1 to 3 positive exact ints, else null (no error).
PyObject *simpleGrid3(PyObject *grid) {
  if (!PyTuple_CheckExact(grid))
    return nullptr;
  Py_ssize_t n = PyTuple_GET_SIZE(grid);
  if (n < 1 || n > 3)
    return nullptr;
  PyObject *g[3] = {sOne, sOne, sOne};
  for (Py_ssize_t d = 0; d < n; ++d) {
    PyObject *x = PyTuple_GET_ITEM(grid, d);
    if (!PyLong_CheckExact(x))
      return nullptr;
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(x, &overflow);
    if (overflow < 0 || (overflow == 0 && v < 1)) {
      PyErr_Clear();
      return nullptr;
    }
    g[d] = x;
  }
  return PyTuple_Pack(3, g[0], g[1], g[2]);
}

PyObject *callSlow(Impl &im, PyObject *grid, PyObject *const *args,
                   Py_ssize_t nargs, PyObject *kwnames) {
  Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
  std::vector<PyObject *> stack(size_t(1 + nargs + nkw));
  stack[0] = grid;
  for (Py_ssize_t i = 0; i < nargs + nkw; ++i)
    stack[size_t(1 + i)] = args[i];
  return PyObject_Vectorcall(im.slow, stack.data(), size_t(1 + nargs), kwnames);
}

/// Re-raises the launch's exception as the CompiledKernel's launch error
/// (`raise ck._launch_error(e) from None`).
void raiseLaunchError(PyObject *ck) {
  PyObject *type, *value, *tb;
  PyErr_Fetch(&type, &value, &tb);
  PyErr_NormalizeException(&type, &value, &tb);
  if (tb && value)
    PyException_SetTraceback(value, tb);
  Py_XDECREF(type);
  Py_XDECREF(tb);
  if (!value)
    return;
  PyObject *err = PyObject_CallMethodOneArg(ck, sLaunchError, value);
  Py_DECREF(value);
  if (!err)
    return;
  PyException_SetCause(err, nullptr); // also sets __suppress_context__
  PyErr_SetObject(reinterpret_cast<PyObject *>(Py_TYPE(err)), err);
  Py_DECREF(err);
}

/// CompiledKernel.run for a cache hit.
PyObject *run(Impl &im, Hit &hit, PyObject *grid, PyObject *grid3,
              PyObject *stream, Work &w) {
  PyObject *ck = hit.ck;
  Ref g3(grid3);
  Py_XINCREF(grid3);
  if (!g3) {
    g3.p = simpleGrid3(grid);
    if (!g3) {
      if (PyErr_Occurred())
        return nullptr;
      g3.p = PyObject_CallMethodOneArg(ck, sGrid3, grid);
      if (!g3)
        return nullptr;
      if (g3.p == Py_None)
        Py_RETURN_NONE; // an empty grid launches nothing
    }
  }
  Ref s;
  if (!stream || stream == Py_None) {
    if (hit.rawStream) { // torch.cuda.current_stream(), in two C calls
      Ref dev(PyObject_CallNoArgs(hit.curDevice));
      if (!dev)
        return nullptr;
      s.p = PyObject_CallOneArg(hit.rawStream, dev.p);
    } else if (hit.streamFn) {
      s.p = PyObject_CallNoArgs(hit.streamFn);
    } else {
      Py_INCREF(sZero);
      s.p = sZero;
    }
  } else if (PyLong_CheckExact(stream)) {
    Py_INCREF(stream);
    s.p = stream;
  } else {
    s.p = PyObject_CallMethodOneArg(ck, sStreamOf, stream);
  }
  if (!s)
    return nullptr;
  // Read per call: tests and launch_profile.py replace `_launch`.
  Ref launch(PyObject_GetAttr(ck, sLaunch));
  if (!launch)
    return nullptr;
  if (tile_py::Kernel *kernel = tile_py::fastLaunchKernel(launch.p)) {
    if (PyTuple_CheckExact(g3.p) && PyTuple_GET_SIZE(g3.p) == 3) {
      // What `fast_launch` would do, without the flat tuple and the call.
      if (!tile_py::fastLaunchValues(*kernel, g3.p, w.flat, size_t(w.nflat),
                                     s.p)) {
        raiseLaunchError(ck);
        return nullptr;
      }
      Py_RETURN_NONE;
    }
  }
  Ref flat(PyTuple_New(w.nflat));
  if (!flat)
    return nullptr;
  for (Py_ssize_t i = 0; i < w.nflat; ++i)
    PyTuple_SET_ITEM(flat.p, i, w.flat[i]); // steals
  w.nflat = 0;
  PyObject *callArgs[3] = {g3.p, flat.p, s.p};
  Ref r(PyObject_Vectorcall(launch.p, callArgs, 3, nullptr));
  if (!r) {
    raiseLaunchError(ck);
    return nullptr;
  }
  Py_RETURN_NONE;
}

bool sameName(PyObject *a, PyObject *b) {
  return a == b || (PyUnicode_Check(a) && PyUnicode_Check(b) &&
                    PyUnicode_Compare(a, b) == 0);
}

PyObject *dispatch(DispatcherObject *self, PyObject *grid, PyObject *grid3,
                   PyObject *const *args, Py_ssize_t nargs,
                   PyObject *kwnames) {
  Impl &im = *self->impl;
  Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
  Work w;
  PyObject *stream = nullptr;
  bool fast = nargs <= im.npos && im.nparams <= kMaxParams;
  if (fast) {
    for (Py_ssize_t i = 0; i < im.nparams; ++i)
      w.vals[i] = i < nargs ? args[i] : nullptr;
    for (Py_ssize_t k = 0; fast && k < nkw; ++k) {
      PyObject *name = PyTuple_GET_ITEM(kwnames, k);
      PyObject *value = args[nargs + k];
      if (sameName(name, sStream)) {
        stream = value;
        continue;
      }
      Py_ssize_t idx = -1;
      for (Py_ssize_t i = 0; i < im.nparams; ++i)
        if (PyTuple_GET_ITEM(im.names, i) == name) {
          idx = i;
          break;
        }
      if (idx < 0)
        for (Py_ssize_t i = 0; i < im.nparams; ++i)
          if (sameName(PyTuple_GET_ITEM(im.names, i), name)) {
            idx = i;
            break;
          }
      if (idx < 0 || w.vals[idx])
        fast = false;
      else
        w.vals[idx] = value;
    }
    for (Py_ssize_t i = 0; fast && i < im.nparams; ++i)
      if (!w.vals[i]) {
        PyObject *d = PyTuple_GET_ITEM(im.defaults, i);
        if (d == im.missing)
          fast = false;
        else
          w.vals[i] = d;
      }
  }
  if (fast && computeKey(im, w)) {
    Hit hit;
    if (lookup(im, w, hit)) {
      ++im.hits;
      return run(im, hit, grid, grid3, stream, w);
    }
    ++im.misses;
    // The Python path launches (and compiles on a miss); its entry then
    // serves this compact key.
    Ref got(callSlow(im, grid, args, nargs, kwnames));
    if (!got)
      return nullptr;
    if (got.p != Py_None) {
      Ref binary(PyObject_GetAttr(got.p, sBinary));
      if (!binary)
        PyErr_Clear();
      else if (binary.p != Py_None && !insert(im, w, got.p))
        return nullptr;
    }
    Py_RETURN_NONE;
  }
  if (PyErr_Occurred())
    PyErr_Clear();
  ++im.slowCalls;
  Ref got(callSlow(im, grid, args, nargs, kwnames));
  if (!got)
    return nullptr;
  Py_RETURN_NONE;
}

// -- Dispatcher ------------------------------------------------------------------

PyObject *dispatcherVectorcall(PyObject *self, PyObject *const *args,
                               size_t nargsf, PyObject *kwnames) {
  Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
  if (!reinterpret_cast<DispatcherObject *>(self)->impl) {
    PyErr_SetString(PyExc_RuntimeError, "Dispatcher not initialized");
    return nullptr;
  }
  if (nargs < 1) {
    PyErr_SetString(PyExc_TypeError, "Dispatcher(grid, *args, **kwargs)");
    return nullptr;
  }
  return dispatch(reinterpret_cast<DispatcherObject *>(self), args[0], nullptr,
                  args + 1, nargs - 1, kwnames);
}

int dispatcherInit(PyObject *selfObj, PyObject *args, PyObject *kwargs) {
  auto *self = reinterpret_cast<DispatcherObject *>(selfObj);
  static const char *kwlist[] = {"names",   "constants", "defaults",
                                 "missing", "npos",      "kind",
                                 "dtype",   "slow",      nullptr};
  PyObject *names, *consts, *defaults, *missing, *kindFn, *dtypeFn, *slow;
  Py_ssize_t npos;
  if (!PyArg_ParseTupleAndKeywords(
          args, kwargs, "O!O!O!OnOOO:Dispatcher", const_cast<char **>(kwlist),
          &PyTuple_Type, &names, &PyTuple_Type, &consts, &PyTuple_Type,
          &defaults, &missing, &npos, &kindFn, &dtypeFn, &slow))
    return -1;
  Py_ssize_t n = PyTuple_GET_SIZE(names);
  if (PyTuple_GET_SIZE(consts) != n || PyTuple_GET_SIZE(defaults) != n ||
      npos < 0 || npos > n) {
    PyErr_SetString(PyExc_ValueError,
                    "Dispatcher: names, constants and defaults differ in "
                    "length");
    return -1;
  }
  if (self->impl) {
    PyErr_SetString(PyExc_RuntimeError, "Dispatcher is initialized once");
    return -1;
  }
  auto *im = new Impl();
  im->nparams = n;
  im->npos = npos;
  for (Py_ssize_t i = 0; i < n; ++i)
    im->isConst.push_back(char(PyObject_IsTrue(PyTuple_GET_ITEM(consts, i))));
  im->caiDtypes = PyDict_New();
  if (!im->caiDtypes) {
    delete im;
    return -1;
  }
  PyObject **slots[] = {&im->names,  &im->defaults, &im->missing,
                        &im->kindFn, &im->dtypeFn,  &im->slow};
  PyObject *values[] = {names, defaults, missing, kindFn, dtypeFn, slow};
  for (size_t k = 0; k < 6; ++k) {
    Py_INCREF(values[k]);
    *slots[k] = values[k];
  }
  self->impl = im;
  return 0;
}

void releaseImpl(Impl *im) {
  if (!im)
    return;
  clearEntries(*im);
  clearTypes(*im);
  clearDTypes(*im);
  Py_CLEAR(im->names);
  Py_CLEAR(im->defaults);
  Py_CLEAR(im->missing);
  Py_CLEAR(im->kindFn);
  Py_CLEAR(im->dtypeFn);
  Py_CLEAR(im->slow);
  Py_CLEAR(im->caiDtypes);
  Py_CLEAR(im->lastGrid);
  Py_CLEAR(im->lastBound);
}

int dispatcherTraverse(PyObject *selfObj, visitproc visit, void *arg) {
  Impl *im = reinterpret_cast<DispatcherObject *>(selfObj)->impl;
  if (!im)
    return 0;
  Py_VISIT(im->names);
  Py_VISIT(im->defaults);
  Py_VISIT(im->missing);
  Py_VISIT(im->kindFn);
  Py_VISIT(im->dtypeFn);
  Py_VISIT(im->slow);
  Py_VISIT(im->caiDtypes);
  Py_VISIT(im->lastGrid);
  Py_VISIT(im->lastBound);
  for (TypeInfo &t : im->types)
    Py_VISIT(reinterpret_cast<PyObject *>(t.type));
  for (DTypeInfo &d : im->dtypes) {
    Py_VISIT(d.src);
    Py_VISIT(d.tile);
  }
  for (Entry &e : im->entries) {
    Py_VISIT(e.ck);
    Py_VISIT(e.streamFn);
    Py_VISIT(e.rawStream);
    Py_VISIT(e.curDevice);
    for (PyObject *o : e.objs)
      Py_VISIT(o);
  }
  return 0;
}

int dispatcherClear(PyObject *selfObj) {
  auto *self = reinterpret_cast<DispatcherObject *>(selfObj);
  Impl *im = self->impl;
  self->impl = nullptr;
  releaseImpl(im);
  delete im;
  return 0;
}

void dispatcherDealloc(PyObject *selfObj) {
  PyObject_GC_UnTrack(selfObj);
  dispatcherClear(selfObj);
  Py_TYPE(selfObj)->tp_free(selfObj);
}

PyObject *dispatcherNew(PyTypeObject *type, PyObject *, PyObject *) {
  auto *self = reinterpret_cast<DispatcherObject *>(type->tp_alloc(type, 0));
  if (!self)
    return nullptr;
  self->vectorcall = dispatcherVectorcall;
  self->impl = nullptr;
  return reinterpret_cast<PyObject *>(self);
}

PyObject *boundVectorcall(PyObject *self, PyObject *const *args, size_t nargsf,
                          PyObject *kwnames) {
  auto *b = reinterpret_cast<BoundObject *>(self);
  if (!b->dispatcher || !b->dispatcher->impl) {
    PyErr_SetString(PyExc_RuntimeError, "launcher without a dispatcher");
    return nullptr;
  }
  return dispatch(b->dispatcher, b->grid, b->grid3, args,
                  PyVectorcall_NARGS(nargsf), kwnames);
}

/// True when `grid` is `last`, or both are tuples of the same exact ints: a
/// grid computed per call, `kernel[(cdiv(n, BLOCK),)]`, is a new tuple each
/// time, and its launcher is the last one.
bool sameGrid(PyObject *grid, PyObject *last) {
  if (grid == last)
    return true;
  if (!last || !PyTuple_CheckExact(grid) ||
      PyTuple_GET_SIZE(grid) != PyTuple_GET_SIZE(last))
    return false;
  for (Py_ssize_t d = 0; d < PyTuple_GET_SIZE(grid); ++d) {
    PyObject *a = PyTuple_GET_ITEM(grid, d), *b = PyTuple_GET_ITEM(last, d);
    if (a == b)
      continue;
    if (!PyLong_CheckExact(a) || !PyLong_CheckExact(b))
      return false;
    int cmp = PyObject_RichCompareBool(a, b, Py_EQ); // exact ints: no error
    if (cmp != 1)
      return false;
  }
  return true;
}

PyObject *dispatcherBind(PyObject *selfObj, PyObject *grid) {
  auto *self = reinterpret_cast<DispatcherObject *>(selfObj);
  Impl *im = self->impl;
  if (!im) {
    PyErr_SetString(PyExc_RuntimeError, "Dispatcher not initialized");
    return nullptr;
  }
  if (im->lastBound && sameGrid(grid, im->lastGrid)) {
    Py_INCREF(im->lastBound);
    return im->lastBound;
  }
  PyObject *grid3 = simpleGrid3(grid);
  if (!grid3 && PyErr_Occurred())
    return nullptr;
  auto *b = PyObject_GC_New(BoundObject, &BoundType);
  if (!b) {
    Py_XDECREF(grid3);
    return nullptr;
  }
  b->vectorcall = boundVectorcall;
  Py_INCREF(selfObj);
  b->dispatcher = self;
  Py_INCREF(grid);
  b->grid = grid;
  b->grid3 = grid3;
  PyObject_GC_Track(reinterpret_cast<PyObject *>(b));
  // Immutable grids (tuples of ints) are worth remembering: the same
  // `kernel[(n,)]` in a loop then allocates nothing.
  if (PyTuple_CheckExact(grid) && grid3) {
    Py_INCREF(grid);
    Py_XSETREF(im->lastGrid, grid);
    Py_INCREF(b);
    Py_XSETREF(im->lastBound, reinterpret_cast<PyObject *>(b));
  }
  return reinterpret_cast<PyObject *>(b);
}

// -- Kernel.__getitem__
// ------------------------------------------------------------

/// `kernel[grid]` as kernel.py's Kernel.__getitem__ does it,
/// `(self._binder or self._build_launcher())(grid)`, without a Python frame,
/// and with a Dispatcher's `bind` called directly. kernel.py installs it as
/// Kernel.__getitem__ (a method descriptor: called with the kernel first).
PyObject *subscriptVectorcall(PyObject *, PyObject *const *args, size_t nargsf,
                              PyObject *kwnames) {
  if (PyVectorcall_NARGS(nargsf) != 2 || kwnames) {
    PyErr_SetString(PyExc_TypeError, "Kernel.__getitem__(kernel, grid)");
    return nullptr;
  }
  PyObject *kernel = args[0], *grid = args[1];
  Ref binder(PyObject_GetAttr(kernel, sBinder));
  if (!binder)
    return nullptr;
  int truth = PyCFunction_Check(binder.p) ? 1 : PyObject_IsTrue(binder.p);
  if (truth < 0)
    return nullptr;
  if (!truth) {
    Py_SETREF(binder.p, PyObject_CallMethodNoArgs(kernel, sBuildLauncher));
    if (!binder)
      return nullptr;
  }
  if (PyCFunction_Check(binder.p) &&
      PyCFunction_GET_FUNCTION(binder.p) == dispatcherBind) {
    PyObject *d = PyCFunction_GET_SELF(binder.p);
    if (d && Py_TYPE(d) == &DispatcherType)
      return dispatcherBind(d, grid);
  }
  return PyObject_CallOneArg(binder.p, grid);
}

/// As a method: `kernel.__getitem__` is bound like a function's.
PyObject *subscriptGet(PyObject *self, PyObject *obj, PyObject *) {
  if (!obj || obj == Py_None) {
    Py_INCREF(self);
    return self;
  }
  return PyMethod_New(self, obj);
}

struct SubscriptObject {
  PyObject_HEAD vectorcallfunc vectorcall;
};

PyTypeObject SubscriptType = [] {
  PyTypeObject t{PyVarObject_HEAD_INIT(nullptr, 0)};
  t.tp_name = "tile._tile.KernelSubscript";
  t.tp_basicsize = sizeof(SubscriptObject);
  t.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL |
               Py_TPFLAGS_METHOD_DESCRIPTOR;
  t.tp_doc = "Kernel.__getitem__ in C: kernel[grid] -> the bound launcher";
  t.tp_vectorcall_offset = offsetof(SubscriptObject, vectorcall);
  t.tp_call = PyVectorcall_Call;
  t.tp_descr_get = subscriptGet;
  return t;
}();

PyObject *dispatcherInvalidate(PyObject *selfObj, PyObject *) {
  Impl *im = reinterpret_cast<DispatcherObject *>(selfObj)->impl;
  if (im)
    clearEntries(*im);
  Py_RETURN_NONE;
}

PyObject *dispatcherStats(PyObject *selfObj, PyObject *) {
  Impl *im = reinterpret_cast<DispatcherObject *>(selfObj)->impl;
  if (!im)
    return PyDict_New();
  return Py_BuildValue("{s:K,s:K,s:K,s:n}", "hits",
                       (unsigned long long)im->hits, "misses",
                       (unsigned long long)im->misses, "slow",
                       (unsigned long long)im->slowCalls, "entries",
                       Py_ssize_t(im->entries.size()));
}

PyMethodDef dispatcherMethods[] = {
    {"bind", dispatcherBind, METH_O,
     "bind(grid) -> callable(*args, stream=None, **kwargs): kernel[grid]"},
    {"invalidate", dispatcherInvalidate, METH_NOARGS,
     "forget every cached specialization (Kernel.cache changed)"},
    {"stats", dispatcherStats, METH_NOARGS,
     "{'hits', 'misses', 'slow', 'entries'}: how calls were served"},
    {nullptr, nullptr, 0, nullptr}};

// -- Bound -------------------------------------------------------------------------

int boundTraverse(PyObject *selfObj, visitproc visit, void *arg) {
  auto *b = reinterpret_cast<BoundObject *>(selfObj);
  Py_VISIT(reinterpret_cast<PyObject *>(b->dispatcher));
  Py_VISIT(b->grid);
  Py_VISIT(b->grid3);
  return 0;
}

int boundClear(PyObject *selfObj) {
  auto *b = reinterpret_cast<BoundObject *>(selfObj);
  Py_CLEAR(b->dispatcher);
  Py_CLEAR(b->grid);
  Py_CLEAR(b->grid3);
  return 0;
}

void boundDealloc(PyObject *selfObj) {
  PyObject_GC_UnTrack(selfObj);
  boundClear(selfObj);
  PyObject_GC_Del(selfObj);
}

PyObject *boundRepr(PyObject *selfObj) {
  auto *b = reinterpret_cast<BoundObject *>(selfObj);
  return PyUnicode_FromFormat("<tile launcher for grid %R>", b->grid);
}

PyTypeObject DispatcherType = [] {
  PyTypeObject t{PyVarObject_HEAD_INIT(nullptr, 0)};
  t.tp_name = "tile._tile.Dispatcher";
  t.tp_basicsize = sizeof(DispatcherObject);
  t.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC |
               Py_TPFLAGS_HAVE_VECTORCALL;
  t.tp_doc = "The C launch path of one kernel (see Dispatch.cpp)";
  t.tp_new = dispatcherNew;
  t.tp_init = dispatcherInit;
  t.tp_dealloc = dispatcherDealloc;
  t.tp_traverse = dispatcherTraverse;
  t.tp_clear = dispatcherClear;
  t.tp_vectorcall_offset = offsetof(DispatcherObject, vectorcall);
  t.tp_call = PyVectorcall_Call;
  t.tp_methods = dispatcherMethods;
  return t;
}();

PyTypeObject BoundType = [] {
  PyTypeObject t{PyVarObject_HEAD_INIT(nullptr, 0)};
  t.tp_name = "tile._tile.BoundLauncher";
  t.tp_basicsize = sizeof(BoundObject);
  t.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC |
               Py_TPFLAGS_HAVE_VECTORCALL;
  t.tp_doc = "kernel[grid]: call it with the kernel's arguments";
  t.tp_dealloc = boundDealloc;
  t.tp_traverse = boundTraverse;
  t.tp_clear = boundClear;
  t.tp_vectorcall_offset = offsetof(BoundObject, vectorcall);
  t.tp_call = PyVectorcall_Call;
  t.tp_repr = boundRepr;
  return t;
}();

} // namespace

bool tile_py::addDispatcher(PyObject *module) {
  struct Name {
    PyObject **slot;
    const char *text;
  } names[] = {{&sIsCuda, "is_cuda"},
               {&sDataPtr, "data_ptr"},
               {&sShape, "shape"},
               {&sStride, "stride"},
               {&sDtype, "dtype"},
               {&sCai, "__cuda_array_interface__"},
               {&sData, "data"},
               {&sTypestr, "typestr"},
               {&sStrides, "strides"},
               {&sStream, "stream"},
               {&sStreamFn, "_stream_fn"},
               {&sStreamOf, "_stream_of"},
               {&sBinary, "binary"},
               {&sLaunch, "_launch"},
               {&sRawStream, "raw_stream"},
               {&sCurDevice, "current_device"},
               {&sClass, "__class__"},
               {&sBinder, "_binder"},
               {&sBuildLauncher, "_build_launcher"},
               {&sGrid3, "_grid3"},
               {&sLaunchError, "_launch_error"}};
  for (Name &n : names)
    if (!*n.slot && !(*n.slot = PyUnicode_InternFromString(n.text)))
      return false;
  if (!sZero && !(sZero = PyLong_FromLong(0)))
    return false;
  if (!sOne && !(sOne = PyLong_FromLong(1)))
    return false;
  if (PyType_Ready(&DispatcherType) < 0 || PyType_Ready(&BoundType) < 0 ||
      PyType_Ready(&SubscriptType) < 0)
    return false;
  // `Dispatcher.kernel_subscript`: reached through the Dispatcher class, so
  // the Python tests' stand-in modules, which carry the real class, get it.
  auto *sub = PyObject_New(SubscriptObject, &SubscriptType);
  if (!sub)
    return false;
  sub->vectorcall = subscriptVectorcall;
  int set = PyDict_SetItemString(DispatcherType.tp_dict, "kernel_subscript",
                                 reinterpret_cast<PyObject *>(sub));
  Py_DECREF(sub);
  if (set < 0)
    return false;
  PyType_Modified(&DispatcherType);
  Py_INCREF(&DispatcherType);
  if (PyModule_AddObject(module, "Dispatcher",
                         reinterpret_cast<PyObject *>(&DispatcherType)) < 0) {
    Py_DECREF(&DispatcherType);
    return false;
  }
  return true;
}
