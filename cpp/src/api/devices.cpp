// The devices of this build and the backend that drives each, opened once per process.
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>

#include "bwprof/api.hpp"
#include "bwprof/error.hpp"
#include "cpu/cpu_backend.hpp"
#ifdef BWPROF_WITH_GPU
#include "gpu/gpu_entry.hpp"
#endif

namespace bwprof {

namespace {

int gpu_count() {
#ifdef BWPROF_WITH_GPU
  return gpu_device_count();
#else
  return 0;
#endif
}

std::string resolve(const std::string& id) {
  const int gpus = gpu_count();
  if (id == "auto" || id.empty()) return gpus > 0 ? "gpu:0" : "cpu";
  if (id == "cpu") return id;
  if (id == "gpu" || id == "cuda" || id == "hip") {
    if (gpus > 0) return "gpu:0";
  } else if (id.rfind("gpu:", 0) == 0 || id.rfind("cuda:", 0) == 0 || id.rfind("hip:", 0) == 0) {
    std::string num = id.substr(id.find(':') + 1);
    char* end = nullptr;
    long n = std::strtol(num.c_str(), &end, 10);
    if (!num.empty() && *end == '\0' && n >= 0 && n < gpus) return "gpu:" + std::to_string(n);
  }
  std::string have = "cpu";
  for (int i = 0; i < gpus; ++i) have += ", gpu:" + std::to_string(i);
#ifdef BWPROF_WITH_GPU
  const char* why = gpus == 0 ? "; this build has GPU support but no GPU was found" : "";
#else
  const char* why = "; this build has no GPU support (built with BWPROF_GPU=OFF or no GPU compiler found)";
#endif
  BWPROF_INVALID("device: unknown or absent device '" + id + "' (available: " + have + ", auto" + why + ")");
}

// The backend of a device, opened once; listing a GPU does not need code for it.
Backend& open_backend(const std::string& device_id) {
  load_builtins();
  static std::mutex m;
  static auto* open = new std::map<std::string, std::unique_ptr<Backend>>();  // lives to exit
  const std::string id = resolve(device_id);
  std::lock_guard<std::mutex> g(m);
  auto it = open->find(id);
  if (it != open->end()) return *it->second;
  std::unique_ptr<Backend> b;
  if (id == "cpu") {
    b = make_cpu_backend();
  } else {
#ifdef BWPROF_WITH_GPU
    b = make_gpu_backend(std::stoi(id.substr(4)));
#endif
  }
  return *open->emplace(id, std::move(b)).first->second;
}

}  // namespace

Backend& backend_for(const std::string& device_id) {
  Backend& b = open_backend(device_id);
#ifdef BWPROF_WITH_GPU
  gpu_require_code(b);  // a GPU this build has no code for: one clear error before any launch
#endif
  return b;
}

const DeviceInfo& device_info(const std::string& device_id) { return open_backend(device_id).info(); }

std::vector<DeviceInfo> list_devices() {
  load_builtins();
  std::vector<DeviceInfo> out;
  for (int i = 0; i < gpu_count(); ++i) out.push_back(open_backend("gpu:" + std::to_string(i)).info());
  out.push_back(open_backend("cpu").info());
  return out;
}

std::vector<std::string> gpu_architectures() {
#ifdef BWPROF_WITH_GPU
  return gpu_code_architectures();
#else
  return {};
#endif
}

std::vector<std::string> build_features() {
  load_builtins();
  std::vector<std::string> f{"cpu"};
#if defined(BWPROF_WITH_GPU) && defined(BWPROF_GPU_HIP)
  f.push_back("hip");
#elif defined(BWPROF_WITH_GPU)
  f.push_back("cuda");
#endif
#ifdef BWPROF_HAVE_SM90A
  f.push_back("sm90a");
#endif
#ifdef BWPROF_WITH_VENDOR_BLAS
  f.push_back("vendor_blas");
#endif
  return f;
}

}  // namespace bwprof
