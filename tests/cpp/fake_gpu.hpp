// What the runner's scripted-backend tests share: a kernel that does nothing and a GPU-like backend
// whose regions, flushes and captures are no-ops; each test scripts time_launch_us on top of it.
#pragma once
#include <functional>
#include <memory>

#include "bwprof/backend.hpp"

namespace bwprof::fakes {

class Nothing final : public KernelInstance {
 public:
  void launch() override {}
  Check check() override { return {}; }
};

class FakeGpu : public Backend {
 public:
  FakeGpu() {
    info_.id = "gpu:0";
    info_.kind = "gpu";
  }
  const DeviceInfo& info() const override { return info_; }
  void flush_cache(KernelInstance&) override {}
  void synchronize() override {}
  std::unique_ptr<KernelInstance> capture(std::function<void()>) override { return nullptr; }
  void begin_region() override {}
  double end_region_us() override { return 0; }
  int launches() const { return launches_; }

 protected:
  DeviceInfo info_;
  int launches_ = 0;
};

}  // namespace bwprof::fakes
