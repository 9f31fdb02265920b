//===- DispatchTypes.cpp - the dispatcher's CPython types -----------------===//
//
// `_tile.Dispatcher` (one per kernel: its parameters, the Python launcher it
// falls back to, its cache), `BoundLauncher` (`kernel[grid]`), and the C
// `Kernel.__getitem__` (`Dispatcher.kernel_subscript`). The calls go to
// dispatch() (Dispatch.cpp).
//
//===----------------------------------------------------------------------===//
#include "Dispatch.h"
#include "Kernel.h"

#include <Python.h>

#include <cstdint>
#include <vector>

namespace {

using namespace tile_py::dispatch;

extern PyTypeObject DispatcherType;
extern PyTypeObject BoundType;

// -- Dispatcher
// ------------------------------------------------------------------

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
  return Py_BuildValue(
      "{s:K,s:K,s:K,s:n}", "hits", (unsigned long long)im->hits, "misses",
      (unsigned long long)im->misses, "slow", (unsigned long long)im->slowCalls,
      "entries", Py_ssize_t(im->entries.size()));
}

/// `key_of(values)`: the compact key and flat values computeKey makes for
/// every parameter's value (in order), as ((words...), (constants keyed by
/// ==, or None...), (flat...)), or None where the call would take the Python
/// path. For tests: equal results must mean equal Python keys
/// (test/python/test_dispatch_key_property.py).
PyObject *dispatcherKeyOf(PyObject *selfObj, PyObject *values) {
  Impl *im = reinterpret_cast<DispatcherObject *>(selfObj)->impl;
  if (!im) {
    PyErr_SetString(PyExc_RuntimeError, "Dispatcher not initialized");
    return nullptr;
  }
  Ref seq(PySequence_Tuple(values));
  if (!seq)
    return nullptr;
  if (PyTuple_GET_SIZE(seq.p) != im->nparams || im->nparams > kMaxParams) {
    PyErr_Format(PyExc_TypeError, "key_of: expected %zd values", im->nparams);
    return nullptr;
  }
  Work w;
  for (Py_ssize_t i = 0; i < im->nparams; ++i)
    w.vals[i] = PyTuple_GET_ITEM(seq.p, i);
  if (!computeKey(*im, w)) {
    PyErr_Clear();
    Py_RETURN_NONE;
  }
  Py_ssize_t nwords = kWords * im->nparams;
  Ref words(PyTuple_New(nwords)), objs(PyTuple_New(im->nparams)),
      flat(PyTuple_New(w.nflat));
  if (!words || !objs || !flat)
    return nullptr;
  for (Py_ssize_t i = 0; i < nwords; ++i) {
    PyObject *word = PyLong_FromUnsignedLongLong(w.words[i]);
    if (!word)
      return nullptr;
    PyTuple_SET_ITEM(words.p, i, word);
  }
  for (Py_ssize_t i = 0; i < im->nparams; ++i) {
    PyObject *o = w.objs[i] ? w.objs[i] : Py_None;
    Py_INCREF(o);
    PyTuple_SET_ITEM(objs.p, i, o);
  }
  for (Py_ssize_t i = 0; i < w.nflat; ++i) {
    Py_INCREF(w.flat[i]);
    PyTuple_SET_ITEM(flat.p, i, w.flat[i]);
  }
  return PyTuple_Pack(3, words.p, objs.p, flat.p);
}

PyMethodDef dispatcherMethods[] = {
    {"bind", dispatcherBind, METH_O,
     "bind(grid) -> callable(*args, stream=None, **kwargs): kernel[grid]"},
    {"invalidate", dispatcherInvalidate, METH_NOARGS,
     "forget every cached specialization (Kernel.cache changed)"},
    {"stats", dispatcherStats, METH_NOARGS,
     "{'hits', 'misses', 'slow', 'entries'}: how calls were served"},
    {"key_of", dispatcherKeyOf, METH_O,
     "key_of(values) -> (words, constants, flat) | None: the compact key"},
    {nullptr, nullptr, 0, nullptr}};

// -- Bound
// -------------------------------------------------------------------------

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
  t.tp_flags =
      Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL;
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
  t.tp_flags =
      Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL;
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
               {&sWatch, "watch"},
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
