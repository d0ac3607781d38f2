// A workload's step (a model's encoder block repeated, a decode step over its layers): an ordered
// list of ops, each a kernel invocation or the user's own callable, each run `count` times a step.
// Consecutive ops of equal count form a block that repeats as a whole (layer 0's ops, then layer
// 1's, ...). plan_step() sizes the step's instances and holds them against the device's memory
// before anything is allocated; time_step() makes them, captures the whole step into one graph
// (CUDA/HIP graphs on a GPU; the calls themselves on the CPU) and times it with the runner.
//
// Instances: an op of a block repeated `count` times gets `sets` instances of its own (its own
// buffers: weights, activations, caches), used in turn (layer l takes set l % sets). `sets` is as
// many as make the block's other iterations move more than twice the last-level cache between two
// uses of one set (so each launch reads its data from memory, as each layer of a real model reads
// its own weights), at most `count` (every layer distinct); or every layer distinct on request.
#pragma once
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "bwprof/kernel.hpp"
#include "bwprof/measurement.hpp"
#include "bwprof/runner.hpp"

namespace bwprof {

struct StepOp {
  std::string name;                          // the op's name in the workload ("qkv_proj")
  std::string kernel, variant;               // a bwprof kernel; variant "" is the backend's default
  std::string dtype = "fp32";
  std::map<std::string, std::string> params;
  int count = 1;                             // launches per step (layers, blocks)
  // The user's own op instead of a kernel (kernel empty): called once per launch; on a GPU it must
  // queue its work on the step's stream (StepOptions::stream).
  std::function<void()> fn;
  double bytes = 0;                          // a user op's declared bytes (read + written) per call
};

// How the step's instances are counted per op of a repeated block.
constexpr int kSetsAuto = 0;   // enough to keep each launch's data out of the last-level cache
constexpr int kSetsEvery = -1; // one per iteration (every layer distinct)

struct StepPlanOp {
  std::string name, kernel, variant, dtype, shape;
  int count = 1, sets = 1, block = 0;
  double bytes_read = 0, bytes_written = 0, flops = 0;  // one launch's minimal traffic
  double host_bytes = 0, device_bytes = 0;              // all of its sets
};

struct StepPlan {
  std::vector<StepPlanOp> ops;
  int launches = 0;                     // launches per step
  double bytes_per_step = 0;            // every launch's bytes read + written
  double host_bytes = 0, device_bytes = 0;
  double host_available = 0, device_available = 0;  // as the memory check saw them (< 0: none)
};

struct StepOptions {
  int warmup = 2, min_repeats = 10, max_repeats = 1000;
  double min_time_s = 0.05, max_time_s = 2.0;
  int sets = kSetsAuto;   // kSetsAuto, kSetsEvery, or at most this many per op
  bool verify = true;     // each op's first and last set checked against its reference after the runs
  bool graph = true;      // capture the step as one graph (GPU); false: launches on the stream
  bool has_stream = false;
  void* stream = nullptr; // the stream the step runs on (the user ops' stream), when has_stream
};

struct StepResult {
  StepPlan plan;
  TimingStats time_us;
  std::string mode;  // "graph" (one CUDA/HIP graph), "stream" (launches timed as one region), "cpu"
  std::string graph_error;  // why a graph was not used, when it was asked for
  bool verified = true;
  double max_rel_error = 0;
  int checked = 0;          // instances checked against their reference
  double sm_clock_mhz = 0;
  int throttled_samples = 0;  // kept samples taken while throttled (the re-takes ran out)
  int throttled_retaken = 0;  // throttled samples dropped and timed again (bwprof/runner.hpp)
};

// The step's instances and memory, checked before anything is allocated: InvalidArgument for a bad
// op (naming it: unknown kernel, parameter, variant, count < 1 or > 10^6, a launch past the time
// bound), OutOfMemory naming what the step needs, per op, against what the host and device have.
StepPlan plan_step(const std::string& device, const std::vector<StepOp>& ops, int sets = kSetsAuto);

// Makes the plan's instances, checks each op once, then times whole steps (warm-up, repeats, the
// median) as one graph on a GPU (launches back to back on the stream when the work cannot be
// captured, or graph is false) and as the calls themselves on the CPU; no cache flush: the
// instances' rotation keeps each launch's data out of the cache.
StepResult time_step(const std::string& device, const std::vector<StepOp>& ops, const StepOptions& opt);

}  // namespace bwprof
