#include "bwprof/parallel.hpp"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "bwprof/environment.hpp"

namespace bwprof {

namespace {

thread_local bool t_inside_pool = false;

class Pool {
 public:
  explicit Pool(int n) : n_(n) {
    for (int i = 1; i < n_; ++i) workers_.emplace_back([this, i] { loop(i); });
  }
  ~Pool() {
    {
      std::lock_guard<std::mutex> g(m_);
      stop_ = true;
      ++generation_;
    }
    cv_.notify_all();
    for (auto& t : workers_) t.join();
  }
  int size() const { return n_; }

  void run(int parts, const std::function<void(int)>& job) {
    std::lock_guard<std::mutex> one_at_a_time(call_);
    {
      std::lock_guard<std::mutex> g(m_);
      job_ = &job;
      parts_ = parts;
      pending_ = parts - 1;
      error_ = nullptr;
      ++generation_;
    }
    cv_.notify_all();
    run_part(0);
    std::unique_lock<std::mutex> g(m_);
    done_.wait(g, [this] { return pending_ == 0; });
    job_ = nullptr;
    if (error_) std::rethrow_exception(error_);
  }

 private:
  void run_part(int i) {
    t_inside_pool = true;
    try {
      (*job_)(i);
    } catch (...) {
      std::lock_guard<std::mutex> g(m_);
      if (!error_) error_ = std::current_exception();
    }
    t_inside_pool = false;
  }

  void loop(int id) {
    std::uint64_t seen = 0;
    for (;;) {
      std::unique_lock<std::mutex> g(m_);
      cv_.wait(g, [&] { return generation_ != seen; });
      seen = generation_;
      if (stop_) return;
      if (id >= parts_) continue;
      g.unlock();
      run_part(id);
      g.lock();
      if (--pending_ == 0) done_.notify_one();
    }
  }

  int n_;
  std::vector<std::thread> workers_;
  std::mutex m_, call_;
  std::condition_variable cv_, done_;
  const std::function<void(int)>* job_ = nullptr;
  int parts_ = 0, pending_ = 0;
  std::uint64_t generation_ = 0;
  bool stop_ = false;
  std::exception_ptr error_;
};

Pool& pool() {
  static Pool* p = new Pool(cpu_threads());  // never destroyed: safe at interpreter exit
  return *p;
}

}  // namespace

int cpu_threads() {
  static int n = [] {
    if (const auto v = env::cpu_threads()) return *v;
    return std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  }();
  return n;
}

void parallel_for(std::size_t n, std::size_t grain,
                  const std::function<void(std::size_t, std::size_t)>& fn) {
  if (n == 0) return;
  grain = std::max<std::size_t>(grain, 1);
  std::size_t max_parts = (n + grain - 1) / grain;
  int parts = static_cast<int>(std::min<std::size_t>(max_parts, cpu_threads()));
  if (parts <= 1 || t_inside_pool) {
    fn(0, n);
    return;
  }
  std::size_t chunk = (n + parts - 1) / parts;
  pool().run(parts, [&](int i) {
    std::size_t b = std::min(n, i * chunk), e = std::min(n, b + chunk);
    if (b < e) fn(b, e);
  });
}

}  // namespace bwprof
