// The api layer's entry points: load the built-ins once, then delegate to the core.
#include "bwprof/api.hpp"

#include <mutex>

#include "api/builtin_families.hpp"
#include "bwprof/peaks.hpp"

namespace bwprof {

void load_builtins() {
  // Explicit calls from one generated function rather than static registrars: a static library's
  // linker drops the object files that nothing references, and their registrars with them.
  static std::once_flag once;
  std::call_once(once, [] { register_builtin_families(registry()); });
}

const std::vector<KernelFamily>& kernel_registry() {
  load_builtins();
  return registry().families();
}

Measurement measure(const std::string& kernel, const std::string& dtype, const std::string& device,
                    const std::string& variant, const std::map<std::string, std::string>& params,
                    const RunOptions& opt) {
  load_builtins();
  const KernelFamily& k = find_kernel(kernel);
  return measure_kernel(backend_for(device), k, dtype, variant, params, opt);
}

std::string explain(const std::string& kernel, const std::string& dtype, const std::string& device,
                    const std::string& variant, const std::map<std::string, std::string>& params) {
  load_builtins();
  return explain_kernel(backend_for(device), find_kernel(kernel), dtype, variant, params);
}

Peaks peaks(const std::string& device, const std::string& dtype, bool refresh) {
  load_builtins();
  Backend& b = backend_for(device);
  return device_peaks(b, parse_dtype(dtype), refresh);
}

}  // namespace bwprof
