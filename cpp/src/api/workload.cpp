// A workload's step: its instances planned and held against memory, made, checked, and the whole
// step timed as one graph by the runner (bwprof/workload.hpp).
#include "bwprof/workload.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <utility>

#include "api/stream_scope.hpp"
#include "bwprof/api.hpp"
#include "bwprof/backend.hpp"
#include "bwprof/error.hpp"
#include "bwprof/interrupt.hpp"
#include "bwprof/limits.hpp"
#include "bwprof/stats.hpp"

namespace bwprof {

namespace {

constexpr int kMaxCount = 1000000;        // launches of one op per step
constexpr double kMaxLaunches = 10000000;  // launches per step

std::string gb(double bytes) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.3g GB", bytes / 1e9);
  return buf;
}

// What plan_step() found for one op, with what time_step() needs to make it.
struct Planned {
  StepPlanOp row;
  const KernelFamily* family = nullptr;  // null for a user op
  const Variant* variant = nullptr;
  Problem problem;
};

std::vector<Planned> plan_ops(Backend& backend, const std::vector<StepOp>& ops, int sets, StepPlan& plan) {
  load_builtins();
  if (ops.empty()) throw InvalidArgument("ops: a workload needs at least one op");
  if (sets < kSetsEvery) throw InvalidArgument("sets: expected 'auto' (0), 'every' (-1) or a count >= 1");
  const DeviceInfo& info = backend.info();
  const std::string kind = info.kind == "cpu" ? "cpu" : "gpu";
  std::vector<Planned> out;
  out.reserve(ops.size());
  double launches = 0;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const StepOp& op = ops[i];
    const std::string who = "op " + std::to_string(i) + (op.name.empty() ? "" : " '" + op.name + "'");
    if (op.name.empty()) throw InvalidArgument(who + ": name must not be empty");
    if (op.count < 1 || op.count > kMaxCount)
      throw InvalidArgument(who + ": count must be 1 to " + std::to_string(kMaxCount) + ", got " +
                            std::to_string(op.count));
    Planned p;
    p.row.name = op.name;
    p.row.count = op.count;
    launches += op.count;
    if (op.fn) {
      if (!op.kernel.empty()) throw InvalidArgument(who + ": give a kernel or a callable, not both");
      if (!std::isfinite(op.bytes) || op.bytes < 0) throw InvalidArgument(who + ": bytes must be finite and >= 0");
      p.row.kernel = op.name;
      p.row.variant = "user";
      p.row.bytes_read = op.bytes;
      out.push_back(std::move(p));
      continue;
    }
    try {
      p.family = &find_kernel(op.kernel);
      p.problem = make_problem(*p.family, kind, op.variant, op.dtype, op.params);
      p.variant = &find_variant(*p.family, kind, p.problem.variant);
      check_work(*p.family, *p.variant, p.problem, info);
    } catch (const InvalidArgument& e) {
      throw InvalidArgument(who + ": " + e.what());
    }
    const Traffic t = p.family->traffic(p.problem);
    const Footprint f = footprint_of(*p.family, p.problem, kind);
    p.row.kernel = p.family->name;
    p.row.variant = p.problem.variant;
    p.row.dtype = to_string(p.problem.dtype);
    p.row.shape = p.problem.shape();
    p.row.bytes_read = t.bytes_read;
    p.row.bytes_written = t.bytes_written;
    p.row.flops = t.flops;
    p.row.host_bytes = f.host_bytes;      // one set for now
    p.row.device_bytes = f.device_bytes;
    out.push_back(std::move(p));
  }
  if (launches > kMaxLaunches) throw InvalidArgument("ops: more than 10^7 launches per step");
  plan.launches = static_cast<int>(launches);

  // Blocks: consecutive ops of equal count repeat together; each op of a block gets its sets.
  int block = 0;
  for (std::size_t b = 0; b < out.size();) {
    std::size_t e = b;
    double bytes = 0;
    while (e < out.size() && out[e].row.count == out[b].row.count) {
      bytes += out[e].row.bytes_read + out[e].row.bytes_written;
      ++e;
    }
    const int count = out[b].row.count;
    int n = 1;
    if (sets == kSetsEvery) {
      n = count;
    } else if (sets > 0) {
      n = std::min(count, sets);
    } else if (bytes > 0) {
      // The other sets of the block pass between two uses of one set: more than twice the cache.
      const double need = std::ceil(2.0 * info.cache_bytes / bytes) + 1;
      n = static_cast<int>(std::min<double>(count, std::max(1.0, need)));
    }
    for (std::size_t i = b; i < e; ++i) {
      Planned& p = out[i];
      p.row.block = block;
      p.row.sets = p.family ? n : 1;  // a user op is the user's: one callable
      p.row.host_bytes *= p.row.sets;
      p.row.device_bytes *= p.row.sets;
    }
    ++block;
    b = e;
  }
  for (const Planned& p : out) {
    plan.ops.push_back(p.row);
    plan.bytes_per_step += p.row.count * (p.row.bytes_read + p.row.bytes_written);
    plan.host_bytes += p.row.host_bytes;
    plan.device_bytes += p.row.device_bytes;
  }

  // The whole step at once against the memory there is (the margins of check_memory()).
  auto biggest = [&](bool device) {
    std::vector<const StepPlanOp*> v;
    for (const StepPlanOp& r : plan.ops) v.push_back(&r);
    std::sort(v.begin(), v.end(), [&](const StepPlanOp* a, const StepPlanOp* b) {
      return (device ? a->device_bytes : a->host_bytes) > (device ? b->device_bytes : b->host_bytes);
    });
    std::string s;
    for (std::size_t i = 0; i < v.size() && i < 3; ++i) {
      const double bytes = device ? v[i]->device_bytes : v[i]->host_bytes;
      if (bytes <= 0) break;
      s += (s.empty() ? "" : ", ") + v[i]->name + " " + std::to_string(v[i]->sets) + " x " +
           gb(bytes / v[i]->sets);
    }
    return s;
  };
  const std::string hint = " (a smaller batch, KV length or fewer layers fit; sets=N uses fewer instances)";
  plan.host_available = available_host_bytes();
  if (plan.host_bytes > 0.9 * plan.host_available)
    throw OutOfMemory("out of host memory: the workload's step needs " + gb(plan.host_bytes) +
                      " of host memory (largest: " + biggest(false) + "), " + gb(plan.host_available) +
                      " available" + hint);
  plan.device_available = kind == "cpu" ? -1.0 : available_device_bytes(backend);
  if (plan.device_available >= 0 && plan.device_bytes > 0.95 * plan.device_available)
    throw OutOfMemory("out of device memory: the workload's step needs " + gb(plan.device_bytes) + " on " + info.id +
                      " (largest: " + biggest(true) + "), " + gb(plan.device_available) + " free" + hint);
  return out;
}

// A step that runs its launches directly (the stream mode, and the CPU's captured sequence).
class StepBody final : public KernelInstance {
 public:
  explicit StepBody(std::function<void()> body) : body_(std::move(body)) {}
  void launch() override { body_(); }
  Check check() override { return {}; }

 private:
  std::function<void()> body_;
};

}  // namespace

StepPlan plan_step(const std::string& device, const std::vector<StepOp>& ops, int sets) {
  StepPlan plan;
  Backend& backend = backend_for(device);
  backend.activate();
  plan_ops(backend, ops, sets, plan);
  return plan;
}

StepResult time_step(const std::string& device, const std::vector<StepOp>& ops, const StepOptions& opt) {
  if (opt.warmup < 0 || opt.min_repeats < 1 || opt.max_repeats < opt.min_repeats)
    throw InvalidArgument("repeats: need warmup >= 0 and 1 <= min_repeats <= max_repeats");
  Backend& backend = backend_for(device);
  backend.activate();
  StepResult r;
  std::vector<Planned> planned = plan_ops(backend, ops, opt.sets, r.plan);
  const bool gpu = backend.info().kind != "cpu";

  // Every op's instances, before anything runs (what does not fit fails here, not half-way).
  std::vector<std::vector<std::unique_ptr<KernelInstance>>> made(planned.size());
  for (std::size_t i = 0; i < planned.size(); ++i) {
    const Planned& p = planned[i];
    if (!p.family) continue;
    for (int s = 0; s < p.row.sets; ++s) {
      check_interrupt();
      made[i].push_back(p.variant->make(backend, p.problem));
    }
  }
  // The step: each block's iterations in turn, iteration l taking set l % sets of its ops.
  std::vector<std::pair<std::size_t, std::size_t>> blocks;
  for (std::size_t b = 0; b < planned.size();) {
    std::size_t e = b;
    while (e < planned.size() && planned[e].row.block == planned[b].row.block) ++e;
    blocks.emplace_back(b, e);
    b = e;
  }
  std::vector<KernelInstance*> inst;  // [op][set] flattened: op i's sets start at first[i]
  std::vector<std::size_t> first(planned.size());
  for (std::size_t i = 0; i < planned.size(); ++i) {
    first[i] = inst.size();
    for (auto& k : made[i]) inst.push_back(k.get());
  }
  std::vector<int> counts, nsets;
  std::vector<const std::function<void()>*> fns;
  for (std::size_t i = 0; i < planned.size(); ++i) {
    counts.push_back(planned[i].row.count);
    nsets.push_back(planned[i].row.sets);
    fns.push_back(planned[i].family ? nullptr : &ops[i].fn);
  }
  auto body = [blocks, inst, first, counts, nsets, fns] {
    for (const auto& be : blocks) {
      const int count = counts[be.first];
      for (int l = 0; l < count; ++l)
        for (std::size_t i = be.first; i < be.second; ++i) {
          if (fns[i]) (*fns[i])();
          else inst[first[i] + l % nsets[i]]->launch();
        }
    }
  };

  RunOptions o;
  o.cold = false;  // the instances' rotation keeps the data out of the cache, as in a real step
  o.warmup = std::max(1, opt.warmup);  // the first replay uploads a graph
  o.min_repeats = opt.min_repeats;
  o.max_repeats = opt.max_repeats;
  o.min_time_s = opt.min_time_s;
  o.max_time_s = opt.max_time_s;
  RunLog log;
  std::vector<double> times;
  {
    std::unique_ptr<StreamScope> scope;
    if (opt.has_stream && gpu) scope = std::make_unique<StreamScope>(backend, opt.stream, "block");
    std::unique_ptr<KernelInstance> seq;
    if (!gpu) {
      seq = backend.capture(body);
      r.mode = "cpu";
    } else if (opt.graph) {
      try {
        seq = backend.capture(body);
        r.mode = "graph";
      } catch (const Error& e) {  // not capturable (a user op's launches, the legacy default stream)
        r.graph_error = e.what();
      }
    } else {
      r.graph_error = "a graph was not asked for";
    }
    if (!seq) {
      backend.synchronize();
      seq = std::make_unique<StepBody>(body);
      r.mode = "stream";
    }
    times = run_repeats(backend, *seq, o, &log);
    backend.synchronize();
  }
  r.time_us = summarize(times);
  r.sm_clock_mhz = log.median_clock_mhz();
  r.throttled_samples = log.throttled;
  r.throttled_retaken = log.throttled_retaken;
  if (opt.verify) {
    // The outputs after the replays: each op's first and last set against its reference.
    for (std::size_t i = 0; i < planned.size(); ++i) {
      if (made[i].empty()) continue;
      std::vector<KernelInstance*> which{made[i].front().get()};
      if (made[i].size() > 1) which.push_back(made[i].back().get());
      for (KernelInstance* k : which) {
        check_interrupt();
        const Check c = k->check();
        r.verified = r.verified && c.ok;
        if (std::isfinite(c.max_rel_error)) r.max_rel_error = std::max(r.max_rel_error, c.max_rel_error);
        ++r.checked;
      }
    }
  }
  return r;
}

}  // namespace bwprof
