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
//   alignment of pointer and strides, extents % 16 and read-only: exactly
//   what the Python key part holds (interop.py), so equal compact keys mean
//   equal Python keys;
// - a Constant contributes its class and its value (ints and bools by value,
//   others by hash and then ==, as the Python dict compares keys).
//
// DispatchKey.cpp computes the compact key. Everything else goes through
// the Python launcher (`slow`), which is the reference behaviour: a
// compact key seen for the first time, any argument
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
#include "DispatchKey.h"
#include "Kernel.h"

#include <Python.h>

#include <cstdint>
#include <cstring>
#include <vector>

namespace tile_py::dispatch {

PyObject *sIsCuda, *sDataPtr, *sShape, *sStride, *sDtype, *sCai, *sData,
    *sTypestr, *sStrides, *sStream, *sStreamFn, *sStreamOf, *sLaunch, *sGrid3,
    *sLaunchError, *sBinary, *sRawStream, *sCurDevice, *sClass, *sBinder,
    *sBuildLauncher, *sZero, *sOne;

} // namespace tile_py::dispatch

namespace {

using namespace tile_py::dispatch;

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

/// (x, y, z) for a tuple of 1 to 3 positive exact ints within the grid
/// limits, else null (no error): CompiledKernel._grid3 handles the rest
/// and raises the errors.
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
    if (overflow || v < 1 || v > tile_py::kMaxGrid[size_t(d)]) {
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
