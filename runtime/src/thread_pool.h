// A small fork-join pool for the CPU executor: parallel_for splits [0, n)
// into chunks run by the workers and the calling thread. A parallel_for
// issued from inside a worker runs inline (no nesting).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "hymo/rt/api.h"

namespace hymo::rt {

class ThreadPool {
 public:
  // `threads` counts the caller: 1 means no worker threads. Throws
  // hymo::rt::Error above kMaxThreads (api.h) or when the system refuses a thread
  // (after stopping the ones it started).
  explicit ThreadPool(int threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const { return threads_; }

  // Runs fn(begin, end) over [0, n) in chunks of at least `grain` items.
  void parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn);

  // Threads to use by default: HYMO_NUM_THREADS if set (an integer from 1 to
  // kMaxThreads, else hymo::rt::Error naming it), else
  // std::thread::hardware_concurrency().
  static int default_threads();

 private:
  void worker_loop();
  void shutdown();  // stops and joins the workers
  void run_chunks();

  int threads_;
  std::vector<std::thread> workers_;
  std::mutex mu_;
  std::condition_variable cv_start_, cv_done_;
  uint64_t generation_ = 0;
  bool stop_ = false;
  // The current job.
  const std::function<void(int64_t, int64_t)>* fn_ = nullptr;
  int64_t n_ = 0, chunk_ = 0, num_chunks_ = 0;
  std::atomic<int64_t> next_{0};
  int active_ = 0;
};

}  // namespace hymo::rt
