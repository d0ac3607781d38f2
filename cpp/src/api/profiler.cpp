// The user's code measured the way bwprof measures its own kernels: the callable becomes a kernel
// instance, timed by the runner's loop (run_repeats) on the backend's timed region, on the stream
// the code launches on, then judged by the one row path (judge_on_device).
#include "bwprof/profiler.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <exception>
#include <limits>
#include <map>

#include "bwprof/api.hpp"
#include "bwprof/backend.hpp"
#include "bwprof/error.hpp"
#include "bwprof/interrupt.hpp"
#include "bwprof/roofline.hpp"
#include "bwprof/stats.hpp"
#include "api/stream_scope.hpp"

namespace bwprof {

namespace {

using BufferList = std::vector<std::pair<const void*, std::size_t>>;

// The user's code as a kernel instance; it keeps the host time of every call.
class UserWork final : public KernelInstance {
 public:
  UserWork(const std::function<void()>& fn, const BufferList& buffers, bool named)
      : fn_(fn), buffers_(buffers), named_(named) {}
  void launch() override {
    const auto t0 = std::chrono::steady_clock::now();
    fn_();
    host_us_.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
  }
  Check check() override { return {}; }  // the user's code has no reference here
  BufferList host_buffers() const override { return buffers_; }
  bool names_its_buffers() const override { return named_; }
  const std::vector<double>& host_us() const { return host_us_; }

 private:
  const std::function<void()>& fn_;
  const BufferList& buffers_;
  bool named_;
  std::vector<double> host_us_;
};

// No work, only the user's buffers: what an empty timed region measures on this stream, and what
// a cold single-shot region flushes.
class NoWork final : public KernelInstance {
 public:
  NoWork(const BufferList& buffers, bool named) : buffers_(buffers), named_(named) {}
  void launch() override {}
  Check check() override { return {}; }
  BufferList host_buffers() const override { return buffers_; }
  bool names_its_buffers() const override { return named_; }

 private:
  const BufferList& buffers_;
  bool named_;
};

double median_of(std::vector<double> v) { return v.empty() ? 0.0 : summarize(std::move(v)).median; }

void check_count(const char* what, double v) {
  if (!std::isfinite(v) || v < 0) {
    char buf[160];
    std::snprintf(buf, sizeof buf, "%s: must be a finite number >= 0, got %g", what, v);
    throw InvalidArgument(buf);
  }
}

}  // namespace

Profiler::Profiler(std::string name, const std::string& device) : name_(std::move(name)) {
  if (name_.empty()) throw InvalidArgument("name: must not be empty");
  backend_ = &backend_for(device);
  opt_.verify = false;
}

Profiler& Profiler::set_bytes(double bytes_read, double bytes_written, const std::string& source) {
  if (source != "declared" && source != "inferred" && source != "mixed" && source != "unknown")
    throw InvalidArgument("bytes source: expected 'declared', 'inferred', 'mixed' or 'unknown', got '" + source + "'");
  // An unknown side is NaN, and only an unknown source has one.
  if (source != "unknown" || !std::isnan(bytes_read)) check_count("bytes_read", bytes_read);
  if (source != "unknown" || !std::isnan(bytes_written)) check_count("bytes_written", bytes_written);
  bytes_read_ = bytes_read;
  bytes_written_ = bytes_written;
  bytes_source_ = source;
  return *this;
}

Profiler& Profiler::set_flops(double flops, const std::string& source) {
  check_count("flops", flops);
  if (source != "declared" && source != "inferred" && source != "counters")
    throw InvalidArgument("flops source: expected 'declared', 'inferred' or 'counters', got '" + source + "'");
  flops_ = flops;
  flops_source_ = source;
  return *this;
}

Profiler& Profiler::set_dtype(const std::string& dtype, bool matrix_units) {
  parse_dtype(dtype);
  dtype_ = dtype;
  matrix_units_ = matrix_units;
  return *this;
}

Profiler& Profiler::set_shape(std::string shape) {
  shape_ = std::move(shape);
  return *this;
}

Profiler& Profiler::set_access_pattern(AccessPattern pattern) {
  pattern_ = pattern;
  return *this;
}

Profiler& Profiler::set_cache(const std::string& cache) {
  if (cache != "cold" && cache != "hot") throw InvalidArgument("cache: expected 'cold' or 'hot', got '" + cache + "'");
  cache_ = cache;
  return *this;
}

Profiler& Profiler::set_warmup(int warmup) {
  if (warmup < 0) throw InvalidArgument("warmup: must be >= 0");
  opt_.warmup = warmup;
  return *this;
}

Profiler& Profiler::set_repeats(int min_repeats, double min_time_s, int max_repeats, double max_time_s) {
  if (min_repeats < 1) throw InvalidArgument("repeats: must be >= 1");
  if (max_repeats < min_repeats) throw InvalidArgument("max_repeats: must be >= repeats");
  if (!(min_time_s >= 0) || !(max_time_s >= 0) || !std::isfinite(min_time_s) || !std::isfinite(max_time_s))
    throw InvalidArgument("min_time_s/max_time_s: must be finite and >= 0");
  opt_.min_repeats = min_repeats;
  opt_.min_time_s = min_time_s;
  opt_.max_repeats = max_repeats;
  opt_.max_time_s = max_time_s;
  return *this;
}

Profiler& Profiler::set_stream(Stream stream) {
  stream_ = stream;
  return *this;
}

Profiler& Profiler::set_stream_hold(const std::string& how) {
  if (how != "spin" && how != "block") throw InvalidArgument("stream_hold: expected 'spin' or 'block', got '" + how + "'");
  hold_ = how;
  return *this;
}

Profiler& Profiler::set_host_buffers(std::vector<std::pair<const void*, std::size_t>> buffers) {
  buffers_ = std::move(buffers);
  buffers_set_ = true;
  return *this;
}

const DeviceInfo& Profiler::device() const { return backend_->info(); }

Stream Profiler::stream() const {
  if (stream_) return *stream_;
  return Stream{backend_->timing_stream()};
}

Measurement Profiler::row(const std::vector<double>& times_us, int warmup, const std::string& hold,
                          bool host_waited) const {
  const DeviceInfo& info = backend_->info();
  Measurement m;
  m.kernel = name_;
  m.family = "user";
  m.variant = "user";
  m.dtype = dtype_;
  m.shape = shape_;
  m.device = info.id;
  m.device_name = info.name;
  m.backend = info.backend;
  m.cache = cache_;
  m.warmup = warmup;
  m.stream_hold = hold;
  m.host_waited = host_waited;
  m.time_us = summarize(times_us);
  m.unstable = is_unstable(m.time_us);
  m.bytes_read = bytes_read_;
  m.bytes_written = bytes_written_;
  m.bytes_source = bytes_source_;
  m.flops = flops_;
  m.flops_source = flops_source_;
  m.verified = false;  // no reference for the user's code
  m.max_rel_error = std::nan("");
  m.tolerance = std::nan("");
  m.occupancy_pct = std::nan("");
  judge_on_device(m, *backend_, pattern_, default_arithmetic(m.dtype, matrix_units_));
  return m;
}

Measurement Profiler::run(const std::function<void()>& fn, void* stream) {
  if (!fn) throw InvalidArgument("fn: not callable (an empty function)");
  if (open_) throw InvalidArgument("measure: a start() has no stop() yet");
  RunOptions opt = opt_;
  opt.cold = cache_ == "cold";
  const bool gpu = backend_->info().kind != "cpu";
  std::vector<double> times, empty;
  std::vector<double> host_us;
  RunLog log;
  std::string hold_used;
  {
    StreamScope scope(*backend_, stream, hold_.value_or("block"));
    UserWork work(fn, buffers_, buffers_set_);
    times = run_repeats(*backend_, work, opt, &log);
    hold_used = backend_->stream_hold();  // "spin" where the hold gave up (log.host_waited)
    host_us = work.host_us();
    if (gpu) {
      // What an empty region measures here, for telling "no GPU work" from a short kernel.
      RunOptions e = opt;
      e.warmup = 1;
      e.min_repeats = 5;
      e.max_repeats = 5;
      e.min_time_s = 0;
      e.target_rel_spread = 0;  // five samples, whatever their spread
      NoWork none(buffers_, buffers_set_);
      empty = run_repeats(*backend_, none, e);
    }
  }
  if (gpu) {
    const double t = median_of(times), t0 = median_of(empty), host = median_of(host_us);
    // A region that timed no more than an empty one while each call kept the host busy far longer:
    // the code ran on the host, or queued its work on another stream. Its bandwidth would be a
    // figure of nothing.
    if (t <= 1.25 * t0 + 0.5 && host >= 20.0 * std::max(t, 0.05) && host >= 10.0) {
      char buf[512];
      std::snprintf(buf, sizeof buf,
                    "fn: '%s' queued no GPU work on the timed stream of %s: each call took %.1f us on the host "
                    "while the device timed %.2f us (an empty region: %.2f us). Run host code with device='cpu', "
                    "or pass the stream the code launches on (stream=)",
                    name_.c_str(), backend_->info().id.c_str(), host, t, t0);
      throw InvalidArgument(buf);
    }
  }
  Measurement m = row(times, opt.warmup, hold_used, log.host_waited);
  log.describe(m);
  return m;
}

Measurement Profiler::measure(const std::function<void()>& fn) {
  // Code that is handed no stream launches on the default one, unless a stream was set.
  return run(fn, stream_ ? stream_->handle : nullptr);
}

Measurement Profiler::measure(const std::function<void(Stream)>& fn) {
  if (!fn) throw InvalidArgument("fn: not callable (an empty function)");
  const Stream s = stream();
  return run([&] { fn(s); }, s.handle);
}

void Profiler::start() { start(stream_ ? *stream_ : Stream{}); }

void Profiler::start(Stream stream) {
  if (open_) throw InvalidArgument("start: called twice without stop()");
  saved_hold_ = backend_->stream_hold();
  backend_->set_timing_stream(stream.handle);
  try {
    if (!saved_hold_.empty()) backend_->set_stream_hold(hold_.value_or("spin"));
    if (cache_ == "cold") {
      NoWork none(buffers_, buffers_set_);
      backend_->flush_cache(none);
    }
    backend_->begin_region();
  } catch (...) {
    if (!saved_hold_.empty()) backend_->set_stream_hold(saved_hold_);
    backend_->reset_timing_stream();
    throw;
  }
  open_ = true;
}

Measurement Profiler::stop() {
  if (!open_) throw InvalidArgument("stop: no start() before it");
  open_ = false;
  double us = 0;
  bool timed_out = false;
  try {
    us = backend_->end_region_us();
    timed_out = backend_->region_hold_timed_out();
  } catch (...) {
    if (!saved_hold_.empty()) backend_->set_stream_hold(saved_hold_);
    backend_->reset_timing_stream();
    throw;
  }
  if (!saved_hold_.empty()) backend_->set_stream_hold(saved_hold_);
  backend_->reset_timing_stream();
  if (timed_out)
    throw Error("stop: the code between start() and stop() made the host wait on the GPU, so the block hold "
                "gave up and this time includes the wait; use set_stream_hold(\"spin\") for such code");
  shots_us_.push_back(us);
  return row(shots_us_, 0, saved_hold_.empty() ? "" : hold_.value_or("spin"), false);
}

void Profiler::reset() { shots_us_.clear(); }

}  // namespace bwprof

// ---- a step made of regions (measure_step) ------------------------------------------------------

namespace bwprof {

namespace {

long long now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

double median_or_nan(std::vector<double> v) {
  return v.empty() ? std::numeric_limits<double>::quiet_NaN() : summarize(std::move(v)).median;
}

// The mean of the declared (finite) values; NaN when no call declared one.
double mean_known(const std::vector<double>& v) {
  double sum = 0;
  int n = 0;
  for (double x : v)
    if (std::isfinite(x)) {
      sum += x;
      ++n;
    }
  return n ? sum / n : std::numeric_limits<double>::quiet_NaN();
}

std::string time_text(double us) {
  char buf[32];
  if (!std::isfinite(us)) return "?";
  if (us >= 1000)
    std::snprintf(buf, sizeof buf, "%.3g ms", us / 1e3);
  else
    std::snprintf(buf, sizeof buf, "%.3g us", us);
  return buf;
}

void check_traffic(const std::string& name, const RegionTraffic& t) {
  for (const auto& kv : {std::pair<const char*, double>{"bytes_read", t.bytes_read},
                         std::pair<const char*, double>{"bytes_written", t.bytes_written},
                         std::pair<const char*, double>{"flops", t.flops}})
    if (!std::isnan(kv.second) && (!std::isfinite(kv.second) || kv.second < 0)) {
      char buf[200];
      std::snprintf(buf, sizeof buf, "region '%s': %s must be a finite number >= 0 (or NaN: not declared), got %g",
                    name.c_str(), kv.first, kv.second);
      throw InvalidArgument(buf);
    }
  parse_dtype(t.dtype);
}

}  // namespace

Profiler::Region::Region(Profiler& profiler, std::string name, double bytes_read, double bytes_written, double flops)
    : Region(profiler, std::move(name), [&] {
        RegionTraffic t;
        t.bytes_read = bytes_read;
        t.bytes_written = bytes_written;
        t.flops = flops;
        return t;
      }()) {}

Profiler::Region::Region(Profiler& profiler, std::string name, const RegionTraffic& traffic) {
  if (name.empty()) throw InvalidArgument("region: a region needs a name");
  check_traffic(name, traffic);
  if (!profiler.stepping_) return;  // outside measure_step: nothing to record
  profiler.open_region(name, traffic);
  profiler_ = &profiler;
}

Profiler::Region::~Region() {
  if (profiler_) profiler_->close_region();
}

void Profiler::open_region(const std::string& name, const RegionTraffic& traffic) {
  if (open_call_) {
    const std::string outer = open_call_->name;
    open_call_.reset();  // the outer region is reported here, not left open
    throw InvalidArgument("region '" + name + "': opened inside region '" + outer +
                          "'; regions do not nest (close '" + outer + "' first, or mark the two as one region)");
  }
  RegionCall c;
  c.name = name;
  c.repeat = step_repeat_;
  c.traffic = traffic;
  c.start_ns = now_ns();
  open_call_ = std::move(c);
}

void Profiler::close_region() {
  if (!open_call_) return;  // closed by a nesting error already
  open_call_->end_ns = now_ns();
  if (open_call_->repeat >= 0) calls_.push_back(std::move(*open_call_));
  open_call_.reset();
}

StepReport Profiler::measure_step(const std::function<void()>& step) {
  if (!step) throw InvalidArgument("step: not callable (an empty function)");
  if (stepping_) throw InvalidArgument("measure_step: called inside a step being measured (steps do not nest)");
  if (backend_->info().kind != "cpu")
    throw InvalidArgument("measure_step: regions are timed on the host clock, which on " + backend_->info().id +
                          " would time the launches, not the GPU's work; use device 'cpu', time the parts with "
                          "measure(), or profile the step with Python's bwprof.profile_step");
  const int warmup = opt_.warmup, repeats = opt_.min_repeats;
  std::vector<double> wall(repeats);
  calls_.clear();
  open_call_.reset();
  stepping_ = true;
  struct Reset {
    Profiler& p;
    ~Reset() {
      p.stepping_ = false;
      p.open_call_.reset();
    }
  } reset{*this};
  for (int i = -warmup; i < repeats; ++i) {
    check_interrupt();
    step_repeat_ = i < 0 ? -1 : i;
    const long long t0 = now_ns();
    step();  // its exception leaves unchanged (Reset puts the profiler back)
    const long long t1 = now_ns();
    if (open_call_)
      throw InvalidArgument("region '" + open_call_->name +
                            "': opened in the step and never closed (make it a scoped bwprof::Profiler::Region)");
    if (i >= 0) wall[i] = (t1 - t0) / 1e3;
  }
  if (calls_.empty())
    throw InvalidArgument("step: it ran no region; a step's rows are its regions "
                          "({ bwprof::Profiler::Region r(prof, \"name\", bytes_read, bytes_written, flops); ... })");

  StepReport rep;
  rep.name = name_;
  rep.device = backend_->info().id;
  rep.repeats = repeats;
  rep.warmup = warmup;
  rep.wall_us = median_or_nan(wall);
  // The run of median wall time: its busy (inside regions; they do not overlap) and idle split.
  std::vector<int> order(repeats);
  for (int i = 0; i < repeats; ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](int a, int b) { return wall[a] < wall[b]; });
  const int mid = order[(repeats - 1) / 2];
  double busy = 0;
  std::vector<double> per_run_calls(repeats, 0.0);
  for (const RegionCall& c : calls_) {
    if (c.repeat == mid) busy += (c.end_ns - c.start_ns) / 1e3;
    per_run_calls[c.repeat] += 1;
  }
  rep.busy_us = busy;
  rep.idle_us = wall[mid] - busy;
  rep.busy_pct = wall[mid] > 0 ? 100.0 * busy / wall[mid] : std::numeric_limits<double>::quiet_NaN();
  rep.region_calls = median_or_nan(per_run_calls);

  // One row per region name, in the order first seen.
  std::vector<std::string> names;
  for (const RegionCall& c : calls_)
    if (std::find(names.begin(), names.end(), c.name) == names.end()) names.push_back(c.name);
  for (const std::string& n : names) {
    std::vector<double> each, rd, wr, fl, sum(repeats, 0.0), count(repeats, 0.0);
    std::string dtype = "fp32";
    bool matrix = false;
    for (const RegionCall& c : calls_) {
      if (c.name != n) continue;
      const double us = (c.end_ns - c.start_ns) / 1e3;
      each.push_back(us);
      sum[c.repeat] += us;
      count[c.repeat] += 1;
      rd.push_back(c.traffic.bytes_read);
      wr.push_back(c.traffic.bytes_written);
      fl.push_back(c.traffic.flops);
      dtype = c.traffic.dtype;
      matrix = matrix || c.traffic.matrix_units;
    }
    StepRegion r;
    Measurement& m = r.row;
    const DeviceInfo& info = backend_->info();
    m.kernel = n;
    m.family = "region";
    m.variant = "user";
    m.dtype = dtype;
    m.shape = shape_;
    m.device = info.id;
    m.device_name = info.name;
    m.backend = info.backend;
    m.cache = "";  // as the step left the caches
    m.warmup = warmup;
    m.time_us = summarize(each);
    m.unstable = is_unstable(m.time_us);
    m.bytes_read = mean_known(rd);
    m.bytes_written = mean_known(wr);
    m.bytes_source = std::isnan(m.bytes_read) || std::isnan(m.bytes_written) ? "unknown" : "declared";
    m.flops = mean_known(fl);
    m.flops_source = std::isnan(m.flops) ? "unknown" : "declared";
    m.verified = false;
    m.max_rel_error = m.tolerance = m.occupancy_pct = std::nan("");
    judge_on_device(m, *backend_, pattern_, default_arithmetic(m.dtype, matrix));
    r.calls_per_step = median_or_nan(count);
    r.time_per_step_us = median_or_nan(sum);
    r.step_share_pct = rep.wall_us > 0 ? 100.0 * r.time_per_step_us / rep.wall_us : std::nan("");
    rep.regions.push_back(std::move(r));
  }
  std::stable_sort(rep.regions.begin(), rep.regions.end(),
                   [](const StepRegion& a, const StepRegion& b) { return a.time_per_step_us > b.time_per_step_us; });

  // The verdict, worded as the Python step report words it on the CPU.
  char head[200];
  std::snprintf(head, sizeof head, "the regions take %.1f %% of the %s step; %.0f region calls", rep.busy_pct,
                time_text(rep.wall_us).c_str(), rep.region_calls);
  if (rep.busy_pct < kHostBoundBusyPct) {
    rep.verdict = "host-bound";
    rep.verdict_text = "host-bound: " + std::string(head) + "; the regions alone take " + time_text(rep.busy_us);
  } else {
    std::map<std::string, double> by;
    double total = 0;
    for (const StepRegion& r : rep.regions) {
      by[r.row.bound] += r.time_per_step_us;
      total += r.time_per_step_us;
    }
    const auto top = std::max_element(by.begin(), by.end(),
                                      [](const auto& a, const auto& b) { return a.second < b.second; });
    const std::string bound = top->first;
    const std::string label = bound == "unknown" ? bound : bound + "-bound";
    const StepRegion* largest = nullptr;
    for (const StepRegion& r : rep.regions)
      if (r.row.bound == bound) {
        largest = &r;
        break;
      }
    const double pct = bound == "compute" ? largest->row.compute_pct_peak : largest->row.bandwidth_pct_peak;
    char tail[160];
    std::snprintf(tail, sizeof tail, "; %.0f %% of the region time in %s rows (largest: %s",
                  total > 0 ? 100.0 * top->second / total : 0.0, bound.c_str(), largest->row.kernel.c_str());
    rep.verdict = label;
    rep.verdict_text = label + ": " + head + tail;
    if (std::isfinite(pct)) {
      char at[48];
      std::snprintf(at, sizeof at, " at %.0f %% of its roof", pct);
      rep.verdict_text += at;
    }
    rep.verdict_text += ")";
  }
  return rep;
}

}  // namespace bwprof
