// GEMM and the QKV projection: host operands, the CPU kernels and the float64 gold.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "bwprof/host_tensor.hpp"
#include "bwprof/kernel.hpp"
#include "common/reference.hpp"

namespace bwprof {

struct GemmData {
  HostTensor A, B, bias, C;
};
GemmData make_gemm_data(const Problem& p);
void gemm_cpu(GemmData& d, const Problem& p);
// fp32_tol: the FP32 tolerance (an FP16 output is held to FP16 rounding whatever it says).
// act_approx: an absolute bound on how far the kernel's activation is from the exact one (the
// vendor's tanh-form GELU: kTanhGeluBound). Each output is held to what an error of tol (normwise)
// in its pre-activation z can do through the activation (gold.cpp), not to |y| alone.
Check gemm_check(const GemmData& d, const Problem& p, double fp32_tol = 1e-4, double act_approx = 0);
// max_z |0.5 z (1 + tanh(sqrt(2/pi) (z + 0.044715 z^3))) - z Phi(z)| = 4.733e-4 (at z = -2.70).
constexpr double kTanhGeluBound = 4.8e-4;
// max |act(w) - act(z)| over |w - z| <= dz (float64): what an error dz in z can do to act(z).
double act_error_bound(Act act, double z, double dz);

// Y[tokens, 3*hidden] = X[tokens, hidden] . W[hidden, 3*hidden], W the Q, K and V weights side by
// side (row-major, as the GEMM's B).
struct QkvData {
  HostTensor X, W, Y;
};
QkvData make_qkv_data(const Problem& p);
void qkv_cpu(QkvData& d, const Problem& p);
Check qkv_check(const QkvData& d, const Problem& p);

// The variants' factories (family.cpp registers them; the GPU ones exist in GPU builds only).
std::unique_ptr<KernelInstance> make_gemm_cpu(Backend&, const Problem&);
std::unique_ptr<KernelInstance> make_gemm_gpu(Backend&, const Problem&);
std::unique_ptr<KernelInstance> make_qkv_cpu(Backend&, const Problem&);
std::unique_ptr<KernelInstance> make_qkv_gpu(Backend&, const Problem&);

}  // namespace bwprof
