//===- GlobalWatch.cpp - have the globals a trace read changed? -----------===//
//
// `_tile.globals_changed(watch)`, and the same check on the dispatcher's hit
// path: tile/global_watch.py makes the watch and holds the contract (and a
// Python reference of this check). A group is [dict, version, names, values,
// absent_names], or [None, 0, cells, values, ()]; on CPython 3.11 and 3.12 a
// dict whose version tag is the group's costs one compare, so a launch pays for
// the names only after someone wrote to that module's globals.
//
//===----------------------------------------------------------------------===//
#include "Dispatch.h"
#include "Kernel.h"

#include <cstring>

namespace tile_py::dispatch {
namespace {

#if PY_VERSION_HEX < 0x030D0000
#define TILE_DICT_VERSION 1
// Deprecated in 3.12 (still maintained), gone in 3.13.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
uint64_t dictVersion(PyObject *d) {
  return reinterpret_cast<PyDictObject *>(d)->ma_version_tag;
}
#pragma GCC diagnostic pop
#endif

/// Is `now` what the trace read as `then`? Same object, or the same type of
/// int, bool, str or bytes and ==, or the same float bits.
bool sameValue(PyObject *then, PyObject *now) {
  if (then == now)
    return true;
  if (Py_TYPE(then) != Py_TYPE(now))
    return false;
  if (PyFloat_CheckExact(then)) {
    double a = PyFloat_AS_DOUBLE(then), b = PyFloat_AS_DOUBLE(now);
    return std::memcmp(&a, &b, sizeof a) == 0 || (a != a && b != b);
  }
  if (!PyLong_CheckExact(then) && !PyUnicode_CheckExact(then) &&
      !PyBytes_CheckExact(then))
    return false; // bool: its two values are singletons
  int eq = PyObject_RichCompareBool(then, now, Py_EQ);
  if (eq < 0)
    PyErr_Clear();
  return eq == 1;
}

/// The group of closure cells: [None, 0, cells, values, ()].
int cellsChanged(PyObject *cells, PyObject *values) {
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(cells); ++i) {
    PyObject *cell = PyTuple_GET_ITEM(cells, i);
    if (!PyCell_Check(cell)) {
      PyErr_SetString(PyExc_TypeError, "a watched closure holds a non-cell");
      return -1;
    }
    PyObject *now = PyCell_GET(cell), *then = PyList_GET_ITEM(values, i);
    if (!now || !sameValue(then, now))
      return 1;
    if (then != now) {
      Py_INCREF(now);
      PyList_SetItem(values, i, now);
    }
  }
  return 0;
}

/// One group; -1 with a Python error when it is malformed.
int groupChanged(PyObject *group) {
  if (!PyList_Check(group) || PyList_GET_SIZE(group) != 5) {
    PyErr_SetString(PyExc_TypeError, "a watch group is a list of five");
    return -1;
  }
  PyObject *dict = PyList_GET_ITEM(group, 0);
  PyObject *names = PyList_GET_ITEM(group, 2);
  PyObject *values = PyList_GET_ITEM(group, 3);
  PyObject *absent = PyList_GET_ITEM(group, 4);
  if ((dict != Py_None && !PyDict_Check(dict)) || !PyTuple_Check(names) ||
      !PyList_Check(values) ||
      PyList_GET_SIZE(values) != PyTuple_GET_SIZE(names) ||
      !PyTuple_Check(absent)) {
    PyErr_SetString(PyExc_TypeError, "a malformed watch group");
    return -1;
  }
  if (dict == Py_None)
    return cellsChanged(names, values);
#ifdef TILE_DICT_VERSION
  PyObject *seen = PyList_GET_ITEM(group, 1);
  uint64_t version = dictVersion(dict);
  if (PyLong_CheckExact(seen) && PyLong_AsUnsignedLongLong(seen) == version)
    return 0;
  if (PyErr_Occurred())
    PyErr_Clear();
#endif
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(names); ++i) {
    PyObject *now = PyDict_GetItemWithError(dict, PyTuple_GET_ITEM(names, i));
    if (!now) {
      if (PyErr_Occurred())
        return -1;
      return 1; // deleted
    }
    PyObject *then = PyList_GET_ITEM(values, i);
    if (!sameValue(then, now))
      return 1;
    if (then != now) { // equal: the next check is by identity
      Py_INCREF(now);
      PyList_SetItem(values, i, now);
    }
  }
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(absent); ++i) {
    int has = PyDict_Contains(dict, PyTuple_GET_ITEM(absent, i));
    if (has != 0)
      return has; // now shadows a builtin, or an error
  }
#ifdef TILE_DICT_VERSION
  PyObject *v = PyLong_FromUnsignedLongLong(version);
  if (!v)
    return -1;
  PyList_SetItem(group, 1, v);
#endif
  return 0;
}

PyObject *globalsChangedPy(PyObject *, PyObject *watch) {
  int r = globalsChanged(watch);
  if (r < 0)
    return nullptr;
  return PyBool_FromLong(r);
}

PyMethodDef globalsChangedDef = {
    "globals_changed", globalsChangedPy, METH_O,
    "globals_changed(watch) -> bool: has a global the trace read been rebound "
    "(tile/global_watch.py)"};

} // namespace

int globalsChanged(PyObject *watch) {
  if (!PyTuple_Check(watch)) {
    PyErr_SetString(PyExc_TypeError, "a watch is a tuple of groups");
    return -1;
  }
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(watch); ++i) {
    int r = groupChanged(PyTuple_GET_ITEM(watch, i));
    if (r != 0)
      return r;
  }
  return 0;
}

} // namespace tile_py::dispatch

bool tile_py::addGlobalWatch(PyObject *module) {
  using namespace tile_py::dispatch;
  PyObject *name = PyModule_GetNameObject(module);
  if (!name)
    return false;
  PyObject *fn = PyCFunction_NewEx(&globalsChangedDef, nullptr, name);
  Py_DECREF(name);
  if (!fn)
    return false;
  return PyModule_AddObject(module, "globals_changed", fn) == 0 ||
         (Py_DECREF(fn), false);
}
