// Peer-to-peer copies between two GPUs of a node: the device's buffer into the peer's
// (unidirectional), or both ways at once on two streams (bidirectional), through the runtime's
// peer copy after peer access is enabled. Bound by the link between the two (NVLink, xGMI, PCIe).
#pragma once
#include <memory>

#include "bwprof/kernel.hpp"

namespace bwprof {

std::unique_ptr<KernelInstance> make_p2p_gpu(Backend&, const Problem&);

}  // namespace bwprof
