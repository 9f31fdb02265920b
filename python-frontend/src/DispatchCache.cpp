//===- DispatchCache.cpp - compact key -> CompiledKernel ------------------===//
//
// The dispatcher's own cache: at most kMaxEntries compact keys (first in,
// first out), each with the CompiledKernel the Python launcher returned for
// it and that kernel's default-stream functions. Constants that are keyed
// by hash are compared with == on lookup, as a dict compares keys. Any
// change bumps `generation`, so a lookup whose __eq__ changed the cache
// gives up.
//
//===----------------------------------------------------------------------===//
#include "Dispatch.h"

#include <cstring>

namespace tile_py::dispatch {

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
    // A global the trace read was rebound: the Python path traces again and
    // replaces the entry (which clears ours).
    if (found.watch && globalsChanged(found.watch) != 0) {
      PyErr_Clear();
      return false;
    }
    PyObject **out[] = {&hit.ck, &hit.streamFn, &hit.rawStream, &hit.curDevice};
    PyObject *in[] = {found.ck, found.streamFn, found.rawStream,
                      found.curDevice};
    for (int k = 0; k < 4; ++k) {
      Py_XINCREF(in[k]);
      *out[k] = in[k];
    }
    return true;
  }
  return false;
}

static void dropEntry(Entry &e) {
  for (PyObject *o : e.objs)
    Py_XDECREF(o);
  Py_XDECREF(e.ck);
  Py_XDECREF(e.watch);
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

bool insert(Impl &im, Work &w, PyObject *ck) {
  Ref sf(PyObject_GetAttr(ck, sStreamFn));
  if (!sf)
    return false;
  Entry e;
  e.watch = PyObject_GetAttr(ck, sWatch);
  if (!e.watch)
    return false;
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

} // namespace tile_py::dispatch
