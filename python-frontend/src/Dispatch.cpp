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
// Dispatch.h lists the parts (classification, key, cache, CPython types).
// Everything else goes through
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
#include "Dispatch.h"
#include "Kernel.h"

#include <Python.h>

#include <cstdint>
#include <cstring>
#include <vector>

namespace tile_py::dispatch {

PyObject *sIsCuda, *sDataPtr, *sShape, *sStride, *sDtype, *sCai, *sData,
    *sTypestr, *sStrides, *sStream, *sStreamFn, *sStreamOf, *sLaunch, *sGrid3,
    *sLaunchError, *sBinary, *sRawStream, *sCurDevice, *sClass, *sBinder,
    *sBuildLauncher, *sWatch, *sZero, *sOne;

} // namespace tile_py::dispatch
namespace tile_py::dispatch {

// -- the call
// ------------------------------------------------------------------

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

static PyObject *callSlow(Impl &im, PyObject *grid, PyObject *const *args,
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
static void raiseLaunchError(PyObject *ck) {
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
static PyObject *run(Impl &im, Hit &hit, PyObject *grid, PyObject *grid3,
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

static bool sameName(PyObject *a, PyObject *b) {
  return a == b || (PyUnicode_Check(a) && PyUnicode_Check(b) &&
                    PyUnicode_Compare(a, b) == 0);
}

PyObject *dispatch(DispatcherObject *self, PyObject *grid, PyObject *grid3,
                   PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
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

} // namespace tile_py::dispatch
