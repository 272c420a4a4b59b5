#include "thread_pool.h"

#include <algorithm>
#include <cstdlib>

namespace hymo::rt {
namespace {
thread_local bool t_in_pool = false;
}

int ThreadPool::default_threads() {
  if (const char* env = std::getenv("HYMO_NUM_THREADS")) {
    int n = std::atoi(env);
    if (n >= 1) return n;
  }
  unsigned hc = std::thread::hardware_concurrency();
  return hc == 0 ? 1 : int(hc);
}

ThreadPool::ThreadPool(int threads) : threads_(std::max(1, threads)) {
  for (int i = 1; i < threads_; ++i) workers_.emplace_back([this] { worker_loop(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_start_.notify_all();
  for (std::thread& t : workers_) t.join();
}

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
