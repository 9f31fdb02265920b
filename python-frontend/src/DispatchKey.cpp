//===- DispatchKey.cpp - the C dispatcher's compact specialization key ----===//
//
// Per parameter, kWords words that stand for its part of kernel.py's
// specialization key (see Dispatch.cpp): the argument's kind, for ints the
// spec's class, for arrays the tile dtype, rank, unit-stride mask, 16-byte
// alignment, extents % 16, whether the array is read-only and whether TMA
// can describe it (interop.TMA), for Constants
// their class and value (or hash). Everything here answers "take the Python
// path" (false) for what it does not know, and that path reports errors.
//
//===----------------------------------------------------------------------===//
#include "Dispatch.h"

#include <cstdint>
#include <cstring>

namespace tile_py::dispatch {

namespace {

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
/// holds the extents' objects; `strides` the strides in elements. A
/// read-only array has a key of its own, as in Python (interop.READ_ONLY).
bool arrayPart(Work &w, Py_ssize_t i, uint64_t kind, PyObject *ptrObj,
               uint64_t ptr, PyObject *const *shape, PyObject *const *strides,
               Py_ssize_t ndim, const PyObject *tileDtype, int64_t itemsize,
               bool readOnly = false) {
  if (ndim > kMaxRank)
    return false;
  uint64_t mask = 0;
  bool ok16 = true, div = true;
  // TMA can describe the array (interop._tma_ok): extents 1 to 2^32, the
  // inner stride alone 1, every other stride positive and below 2^40 bytes.
  bool tma = ndim >= 1 && ndim <= 5;
  for (Py_ssize_t d = 0; d < ndim; ++d) {
    int64_t n, s;
    if (!asInt64(shape[d], n) || !asInt64(strides[d], s))
      return false;
    if (s == 1)
      mask |= uint64_t(1) << d;
    else if ((uint64_t(s) * uint64_t(itemsize)) & 15)
      ok16 = false;
    if (d + 1 == ndim && (n & 15)) // the inner extent (interop._array_parts)
      div = false;
    if (n < 1 || uint64_t(n) > (uint64_t(1) << 32) ||
        (d + 1 < ndim &&
         (s < 1 || uint64_t(s) >= (uint64_t(1) << 40) / uint64_t(itemsize))))
      tma = false;
  }
  bool aligned = (ptr & 15) == 0;
  tma = tma && ok16 && aligned && mask == uint64_t(1) << (ndim - 1);
  w.words[kWords * i] = kind | uint64_t(ndim) << 8 |
                        uint64_t(ok16 && aligned) << 16 | uint64_t(div) << 17 |
                        uint64_t(readOnly) << 18 | uint64_t(tma) << 19;
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
  return arrayPart(w, i, kTorch, ptrObj.p, ptr, &PyTuple_GET_ITEM(shape.p, 0),
                   &PyTuple_GET_ITEM(st.p, 0), PyTuple_GET_SIZE(shape.p),
                   tileDtype, itemsize);
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
  // NumPy exports the canonical C strides of a C-contiguous array, which for
  // an extent of 0 or 1 need not be `a.strides` (a (1, 32) transpose of a
  // (32, 1) array has strides (8, 8), exported as (256, 8)). The Python key
  // reads `a.strides`, so such arrays read it too.
  Ref ownStrides;
  for (Py_ssize_t d = 0; d < ndim && !ownStrides; ++d)
    if (view.shape[d] <= 1) {
      ownStrides.p = PyObject_GetAttr(v, sStrides);
      if (!ownStrides || !PyTuple_Check(ownStrides.p) ||
          PyTuple_GET_SIZE(ownStrides.p) != ndim)
        return false;
    }
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
    if (ownStrides) {
      sb = PyLong_AsSsize_t(PyTuple_GET_ITEM(ownStrides.p, d));
      if (sb == -1 && PyErr_Occurred())
        return false;
    } else if (!view.strides) { // C-contiguous
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
  return arrayPart(w, i, kNumpy, ptrObj.p, uint64_t(uintptr_t(view.buf)), shape,
                   strides, ndim, tileDtype, tileItemsize, view.readonly != 0);
}

bool caiPart(Impl &im, Work &w, Py_ssize_t i, PyObject *v) {
  Ref d(PyObject_GetAttr(v, sCai));
  if (!d || !PyDict_Check(d.p))
    return false;
  PyObject *data = PyDict_GetItemWithError(d.p, sData);
  PyObject *shapeObj = PyDict_GetItemWithError(d.p, sShape);
  PyObject *typestr = PyDict_GetItemWithError(d.p, sTypestr);
  if (!data || !shapeObj || !typestr || !PyTuple_Check(data) ||
      PyTuple_GET_SIZE(data) < 1 ||
      !PyLong_CheckExact(PyTuple_GET_ITEM(data, 0)))
    return false;
  PyObject *ptrObj = PyTuple_GET_ITEM(data, 0);
  uint64_t ptr = PyLong_AsUnsignedLongLongMask(ptrObj);
  if (PyErr_Occurred())
    return false;
  // data = (pointer, read-only)
  int readOnly = PyTuple_GET_SIZE(data) > 1
                     ? PyObject_IsTrue(PyTuple_GET_ITEM(data, 1))
                     : 0;
  if (readOnly < 0)
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
                   info.itemsize, readOnly != 0);
}

} // namespace

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
      } else if (t == &PyFloat_Type) {
        // By bits, as the Python key: -0.0 and 0.0 are two specializations,
        // and a NaN matches itself.
        double d = PyFloat_AS_DOUBLE(v);
        std::memcpy(&word[2], &d, sizeof d);
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

} // namespace tile_py::dispatch
