//===- DispatchArgs.cpp - what kind of argument the dispatcher sees -------===//
//
// An argument's kind (int, float, bool, torch tensor, NumPy array, CUDA array
// interface, or "take the Python path") is decided once per type by
// interop.fast_kind, and an array's tile dtype once per dtype object (by
// identity; a CUDA array interface typestr by value) by interop.fast_dtype:
// the dispatcher memoizes both here.
//
//===----------------------------------------------------------------------===//
#include "Dispatch.h"

namespace tile_py::dispatch {

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

static bool setDType(DTypeInfo &info, PyObject *r) {
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
    Ref r(
        PyObject_CallFunctionObjArgs(im.dtypeFn, kindObj.p, typestr, nullptr));
    if (!setDType(out, r.p))
      return false;
    if (PyDict_SetItem(im.caiDtypes, typestr, r.p) < 0)
      return false;
    return true;
  }
  return setDType(out, hit);
}

} // namespace tile_py::dispatch
