//===- HostThreadPool.cpp - the threads CPU kernels run on ----------------===//
#include "compiler/cpu/HostThreadPool.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <unistd.h>
#include <vector>

using namespace mlir::tile;

namespace {

unsigned threadCount() {
  if (const char *env = std::getenv("TILE_NUM_THREADS")) {
    int n = std::atoi(env);
    if (n > 0)
      return n;
  }
  return std::max(1u, std::thread::hardware_concurrency());
}

/// One launch: chunks of [0, total) handed out by an atomic counter.
struct Job {
  llvm::function_ref<void(int64_t, int64_t)> body;
  int64_t total, chunk;
  std::atomic<int64_t> next{0};
  unsigned users = 0; // workers inside the job (guarded by the pool mutex)

  void work() {
    for (;;) {
      int64_t begin = next.fetch_add(chunk);
      if (begin >= total)
        return;
      body(begin, std::min(total, begin + chunk));
    }
  }
};

/// Workers sleep until a job arrives, then take chunks together with the
/// submitting thread. The submitter waits only for workers that joined: one
/// that wakes after the work ran out finds no job, so a slow wake-up (a busy
/// machine) never delays a launch.
class Pool {
public:
  explicit Pool(unsigned numWorkers) {
    for (unsigned i = 0; i < numWorkers; ++i)
      workers.emplace_back([this] { workerLoop(); });
  }

  ~Pool() {
    {
      std::lock_guard<std::mutex> lock(mutex);
      stop = true;
    }
    wake.notify_all();
    for (std::thread &t : workers)
      t.join();
  }

  void run(int64_t n, llvm::function_ref<void(int64_t, int64_t)> fn) {
    std::lock_guard<std::mutex> turn(submitMutex);
    int64_t participants = workers.size() + 1;
    // Several chunks per thread even out blocks of unequal cost.
    Job job{fn, n, std::max<int64_t>(1, n / (4 * participants))};
    {
      std::lock_guard<std::mutex> lock(mutex);
      current = &job;
      ++generation;
    }
    wake.notify_all();
    job.work();
    std::unique_lock<std::mutex> lock(mutex);
    current = nullptr;
    done.wait(lock, [&] { return job.users == 0; });
  }

private:
  void workerLoop() {
    uint64_t seen = 0;
    std::unique_lock<std::mutex> lock(mutex);
    for (;;) {
      wake.wait(lock, [&] { return stop || generation != seen; });
      if (stop)
        return;
      seen = generation;
      Job *job = current;
      if (!job)
        continue;
      ++job->users;
      lock.unlock();
      job->work();
      lock.lock();
      if (--job->users == 0)
        done.notify_all();
    }
  }

  std::vector<std::thread> workers;
  std::mutex submitMutex, mutex;
  std::condition_variable wake, done;
  bool stop = false;
  uint64_t generation = 0;
  Job *current = nullptr;
};

Pool *getPool() {
  static std::mutex mutex;
  static Pool *pool = nullptr;
  static pid_t owner = 0;
  std::lock_guard<std::mutex> lock(mutex);
  // A forked child has none of its parent's threads: start a new pool (the
  // old one cannot be joined, so it is leaked).
  if (!pool || owner != getpid()) {
    pool = new Pool(threadCount() - 1);
    owner = getpid();
  }
  return pool;
}

} // namespace

void mlir::tile::parallelChunks(
    int64_t n, llvm::function_ref<void(int64_t, int64_t)> body) {
  if (n <= 0)
    return;
  if (n == 1) {
    body(0, 1);
    return;
  }
  getPool()->run(n, body);
}
