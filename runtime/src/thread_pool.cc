#include "thread_pool.h"

#include <algorithm>
#include <cstdlib>
#include <string>

#include "hymo/rt/parse.h"
#include "hymo/rt/status.h"

namespace hymo::rt {
namespace {
thread_local bool t_in_pool = false;
}

int ThreadPool::default_threads() {
  if (const char* env = std::getenv("HYMO_NUM_THREADS"); env && *env) {  // (empty: unset)
    const std::string v = env;
    long n = 0;
    if (!parse_integer(v, &n) || n < 1 || n > kMaxThreads)
      throw Error("HYMO_NUM_THREADS='" + v + "': expected an integer from 1 to " + std::to_string(kMaxThreads) +
                  " (unset it to use every core)");
    return int(n);
  }
  unsigned hc = std::thread::hardware_concurrency();
  return hc == 0 ? 1 : int(std::min<unsigned>(hc, kMaxThreads));
}

ThreadPool::ThreadPool(int threads) : threads_(std::max(1, threads)) {
  if (threads_ > kMaxThreads)
    throw Error(std::to_string(threads) + " worker threads asked for: at most " + std::to_string(kMaxThreads));
  workers_.reserve(size_t(threads_ - 1));  // (no reallocation once threads run)
  try {
    for (int i = 1; i < threads_; ++i) workers_.emplace_back([this] { worker_loop(); });
  } catch (const std::exception& e) {
    // The system refused a thread: stop the ones already running (the
    // destructor does not run for a constructor that throws).
    const size_t started = workers_.size();
    shutdown();
    throw Error("cannot start worker thread " + std::to_string(started + 1) + " of " + std::to_string(threads_ - 1) +
                " (" + e.what() + "); ask for fewer threads (--threads or HYMO_NUM_THREADS)");
  }
}

void ThreadPool::shutdown() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_start_.notify_all();
  for (std::thread& t : workers_) t.join();
  workers_.clear();
}

ThreadPool::~ThreadPool() { shutdown(); }

void ThreadPool::run_chunks() {
  for (;;) {
    int64_t c = next_.fetch_add(1);
    if (c >= num_chunks_) break;
    int64_t b = c * chunk_;
    int64_t e = std::min(n_, b + chunk_);
    (*fn_)(b, e);
  }
}

void ThreadPool::worker_loop() {
  t_in_pool = true;
  uint64_t seen = 0;
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_start_.wait(lock, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
    }
    run_chunks();
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (--active_ == 0) cv_done_.notify_one();
    }
  }
}

void ThreadPool::parallel_for(int64_t n, int64_t grain,
                              const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  grain = std::max<int64_t>(1, grain);
  int64_t max_chunks = (n + grain - 1) / grain;
  int64_t chunks = std::min<int64_t>(threads_, max_chunks);
  if (chunks <= 1 || t_in_pool || workers_.empty()) {
    fn(0, n);
    return;
  }
  // One job at a time; the caller takes part.
  {
    std::lock_guard<std::mutex> lock(mu_);
    fn_ = &fn;
    n_ = n;
    num_chunks_ = chunks * 4 <= max_chunks ? chunks * 4 : chunks;  // a little load balance
    chunk_ = (n + num_chunks_ - 1) / num_chunks_;
    num_chunks_ = (n + chunk_ - 1) / chunk_;
    next_.store(0);
    active_ = int(workers_.size());
    ++generation_;
  }
  cv_start_.notify_all();
  t_in_pool = true;
  run_chunks();
  t_in_pool = false;
  std::unique_lock<std::mutex> lock(mu_);
  cv_done_.wait(lock, [&] { return active_ == 0; });
  fn_ = nullptr;
}

}  // namespace hymo::rt
