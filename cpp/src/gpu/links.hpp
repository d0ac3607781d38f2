// The links around a GPU as this machine reports them: to the host (NVML's PCIe generation and
// width or chip-to-chip mode, else sysfs) and to each peer GPU (NVLink through NVML, xGMI or PCIe
// through the HIP runtime). The rate tables are the core's (bwprof/link.hpp).
#pragma once
#include <string>

#include "bwprof/link.hpp"

namespace bwprof {

// The bus id of GPU `ordinal` as the runtime gives it ("0000:1b:00.0", lower case).
std::string gpu_pci_bus_id(int ordinal);
// The link GPU `ordinal` (at `bus_id`, of architecture `arch`) reaches host memory over.
Link host_link_of(int ordinal, const std::string& bus_id, const std::string& arch);
// The link a copy from GPU `a` to GPU `b` crosses, with its one-direction bandwidth where known.
// `direct` is false when the two cannot reach each other's memory (the runtime stages the copy
// through the host).
Link peer_link(int a, int b, bool* direct = nullptr);

}  // namespace bwprof
