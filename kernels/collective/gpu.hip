// Collectives on the GPUs: NCCL/RCCL calls on one stream per rank. Over the GPUs of this process
// (ncclCommInitAll), one group launches every rank's call, forked off the measured GPU's stream
// and joined back, so that the backend's two events bracket the whole collective. Over a job's
// ranks (ncclCommInitRank), each process launches its own rank after a barrier that lines the
// ranks up, so that its events time the collective rather than the wait for late ranks.
#include <algorithm>
#include <cmath>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "bwprof/error.hpp"
#include "bwprof/parallel.hpp"
#include "collective/collective.hpp"
#include "collective/nccl_api.hpp"
#include "common/reference.hpp"
#include "gpu/gpu_backend.hpp"
#include "gpu/links.hpp"

namespace bwprof {

namespace {

struct Job {
  nccl::Comm comm = nullptr;
  int nranks = 0, rank = 0, device = 0;
  DeviceBuffer barrier;  // one float the barrier all-reduces
};

std::mutex g_mu;
std::unique_ptr<Job>& job() {
  static auto* j = new std::unique_ptr<Job>();  // lives to exit, like the backends
  return *j;
}

// Communicators over GPUs 0..n-1 of this process, made once (ncclCommInitAll takes a second or
// more) and kept for the process.
const std::vector<nccl::Comm>& node_comms(int n) {
  static auto* cache = new std::map<int, std::vector<nccl::Comm>>();
  std::lock_guard<std::mutex> g(g_mu);
  auto it = cache->find(n);
  if (it != cache->end()) return it->second;
  std::vector<nccl::Comm> comms(static_cast<std::size_t>(n));
  std::vector<int> devs(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) devs[static_cast<std::size_t>(i)] = i;
  int back = 0;
  BWPROF_GPU_CHECK(hipGetDevice(&back));
  const nccl::Result r = nccl::library().comm_init_all(comms.data(), n, devs.data());
  (void)hipSetDevice(back);
  BWPROF_NCCL_CHECK(r);
  return cache->emplace(n, std::move(comms)).first->second;
}

int nccl_type(DType t) {
  switch (t) {
    case DType::kF32: return nccl::kFloat32;
    case DType::kF16: return nccl::kFloat16;
    case DType::kBF16: return nccl::kBfloat16;
  }
  return nccl::kFloat32;
}

struct Rank {
  int id = 0;       // the rank in the communicator
  int device = 0;   // its GPU
  nccl::Comm comm = nullptr;
  hipStream_t stream = nullptr;
  bool own_stream = false;
  hipEvent_t join = nullptr;
  DeviceBuffer in, out;
};

class CollectiveGpu final : public KernelInstance {
 public:
  CollectiveGpu(GpuBackend& g, const Problem& p)
      : g_(g), c_(parse_collective(p.kernel)), t_(p.dtype), lib_(nccl::library()) {
    nranks_ = p.i("ranks");
    n_ = collective_counts(c_, p.i("bytes"), nranks_, t_);
    const std::size_t es = dtype_size(t_);
    if (const Job* j = job().get()) {
      if (g.ordinal() != j->device)
        BWPROF_INVALID("device: this process is rank " + std::to_string(j->rank) + " of its job on gpu:" +
                       std::to_string(j->device) + ", not gpu:" + std::to_string(g.ordinal()));
      joined_ = true;
      Rank r;
      r.id = j->rank;
      r.device = j->device;
      r.comm = j->comm;
      r.stream = g.stream();
      ranks_.push_back(std::move(r));
      link_ = Link{"network", "between the job's processes (not known)", 0};
    } else {
      int count = 0;
      BWPROF_GPU_CHECK(hipGetDeviceCount(&count));
      if (nranks_ > count)
        BWPROF_INVALID("ranks: " + std::to_string(nranks_) + " GPUs asked for, this process sees " + std::to_string(count));
      if (g.ordinal() >= nranks_)
        BWPROF_INVALID("device: gpu:" + std::to_string(g.ordinal()) + " is not among the " + std::to_string(nranks_) +
                       " GPUs the collective spans (gpu:0 to gpu:" + std::to_string(nranks_ - 1) + ")");
      const auto& comms = node_comms(static_cast<int>(nranks_));
      for (int i = 0; i < nranks_; ++i) {
        Rank r;
        r.id = r.device = i;
        r.comm = comms[static_cast<std::size_t>(i)];
        ranks_.push_back(std::move(r));
      }
      link_ = node_link();
    }
    HostTensor host(t_, static_cast<std::size_t>(n_.in), "collective input");
    for (Rank& r : ranks_) {
      BWPROF_GPU_CHECK(hipSetDevice(r.device));
      parallel_for(static_cast<std::size_t>(n_.in), 1 << 16, [&](std::size_t b, std::size_t e) {
        for (std::size_t i = b; i < e; ++i) host.set(i, collective_input(r.id, static_cast<std::int64_t>(i)));
      });
      r.in = DeviceBuffer::from(host, "collective input");
      r.out = DeviceBuffer(static_cast<std::size_t>(n_.out) * es, "collective output");
      r.out.fill(0xee);
      if (!joined_ && r.device != g.ordinal()) {
        BWPROF_GPU_CHECK(hipStreamCreateWithFlags(&r.stream, hipStreamNonBlocking));
        BWPROF_GPU_CHECK(hipEventCreateWithFlags(&r.join, hipEventDisableTiming));
        r.own_stream = true;
      } else if (!joined_) {
        r.stream = g.stream();
      }
    }
    BWPROF_GPU_CHECK(hipSetDevice(g.ordinal()));
    BWPROF_GPU_CHECK(hipEventCreateWithFlags(&fork_, hipEventDisableTiming));
    for (Rank& r : ranks_) {
      BWPROF_GPU_CHECK(hipSetDevice(r.device));
      BWPROF_GPU_CHECK(hipDeviceSynchronize());
    }
    BWPROF_GPU_CHECK(hipSetDevice(g.ordinal()));
  }

  ~CollectiveGpu() override {
    for (Rank& r : ranks_) {
      (void)hipSetDevice(r.device);
      (void)hipDeviceSynchronize();
      r.in = DeviceBuffer();
      r.out = DeviceBuffer();
      if (r.own_stream) (void)hipStreamDestroy(r.stream);
      if (r.join) (void)hipEventDestroy(r.join);
    }
    (void)hipSetDevice(g_.ordinal());
    if (fork_) (void)hipEventDestroy(fork_);
  }

  void before_timing() override {
    if (!joined_) return;
    // A barrier: every rank's host leaves it within microseconds of the others, so the timed
    // collective does not start with a wait for a rank that is still flushing its L2.
    Job& j = *job();
    BWPROF_NCCL_CHECK(lib_.all_reduce(j.barrier.get(), j.barrier.get(), 1, nccl::kFloat32, nccl::kSum, j.comm,
                                      g_.stream()));
    g_.synchronize();
  }

  void launch() override {
    hipStream_t s = g_.stream();
    if (!joined_) {
      BWPROF_GPU_CHECK(hipEventRecord(fork_, s));
      for (Rank& r : ranks_)
        if (r.own_stream) BWPROF_GPU_CHECK(hipStreamWaitEvent(r.stream, fork_, 0));
    }
    BWPROF_NCCL_CHECK(lib_.group_start());
    for (Rank& r : ranks_) call(r);
    BWPROF_NCCL_CHECK(lib_.group_end());
    for (Rank& r : ranks_) {
      if (!r.own_stream) continue;
      BWPROF_GPU_CHECK(hipEventRecord(r.join, r.stream));
      BWPROF_GPU_CHECK(hipStreamWaitEvent(s, r.join, 0));
    }
  }

  Check check() override {
    ErrorMeter m;
    HostTensor got(t_, static_cast<std::size_t>(n_.out), "collective output");
    for (Rank& r : ranks_) {
      BWPROF_GPU_CHECK(hipSetDevice(r.device));
      BWPROF_GPU_CHECK(hipStreamSynchronize(r.stream));
      r.out.to(got);
      for (std::int64_t i : sample_indices(n_.out, 1 << 16))
        m.add(got.get(static_cast<std::size_t>(i)), collective_gold(c_, nranks_, r.id, i, n_));
    }
    BWPROF_GPU_CHECK(hipSetDevice(g_.ordinal()));
    // A reduction rounds each partial sum to the storage type: BF16 gets u = 2^-8 per rank on top
    // of its single-rounding tolerance (FP16's 4e-3 already covers 8 ranks' 2^-11 each).
    double tol = tolerance_for(t_, 1e-6);
    if (t_ == DType::kBF16) tol = std::max(tol, std::ldexp(1.0, -8) * double(nranks_));
    return m.finish(tol);
  }

  Link link() const override { return link_; }

 private:
  void call(Rank& r) {
    const int dt = nccl_type(t_);
    void* s = r.stream;
    const std::size_t count = static_cast<std::size_t>(n_.call);
    switch (c_) {
      case Collective::kAllReduce:
        BWPROF_NCCL_CHECK(lib_.all_reduce(r.in.get(), r.out.get(), count, dt, nccl::kSum, r.comm, s));
        break;
      case Collective::kAllGather:
        BWPROF_NCCL_CHECK(lib_.all_gather(r.in.get(), r.out.get(), count, dt, r.comm, s));
        break;
      case Collective::kReduceScatter:
        BWPROF_NCCL_CHECK(lib_.reduce_scatter(r.in.get(), r.out.get(), count, dt, nccl::kSum, r.comm, s));
        break;
      case Collective::kBroadcast:
        BWPROF_NCCL_CHECK(lib_.broadcast(r.in.get(), r.out.get(), count, dt, 0, r.comm, s));
        break;
      case Collective::kAllToAll: {
        const std::size_t chunk_bytes = count * dtype_size(t_);
        for (int peer = 0; peer < nranks_; ++peer) {
          BWPROF_NCCL_CHECK(lib_.send(r.in.get<char>() + peer * chunk_bytes, count, dt, peer, r.comm, s));
          BWPROF_NCCL_CHECK(lib_.recv(r.out.get<char>() + peer * chunk_bytes, count, dt, peer, r.comm, s));
        }
        break;
      }
    }
  }

  // The slowest link between two of the GPUs: a collective over them runs at its pace.
  Link node_link() const {
    if (nranks_ < 2) return Link{"none", "one GPU (no link)", 0};
    Link worst;
    for (int a = 0; a < nranks_; ++a)
      for (int b = a + 1; b < nranks_; ++b) {
        const Link l = peer_link(a, b);
        if (worst.kind.empty() || (worst.known() && (!l.known() || l.gbs < worst.gbs))) worst = l;
      }
    return worst;
  }

  GpuBackend& g_;
  Collective c_;
  DType t_;
  const nccl::Library& lib_;
  std::int64_t nranks_ = 1;
  CollectiveCounts n_;
  bool joined_ = false;
  std::vector<Rank> ranks_;
  hipEvent_t fork_ = nullptr;
  Link link_;
};

}  // namespace

std::string collective_unique_id() {
  nccl::UniqueId id{};
  BWPROF_NCCL_CHECK(nccl::library().get_unique_id(&id));
  return std::string(id.internal, sizeof id.internal);
}

void collective_join(const std::string& id, int nranks, int rank, int device) {
  if (id.size() != sizeof(nccl::UniqueId().internal))
    BWPROF_INVALID("unique_id: expected " + std::to_string(sizeof(nccl::UniqueId().internal)) + " bytes, got " +
                   std::to_string(id.size()));
  if (nranks < 1) BWPROF_INVALID("world_size: must be at least 1, got " + std::to_string(nranks));
  if (rank < 0 || rank >= nranks)
    BWPROF_INVALID("rank: must be in [0, " + std::to_string(nranks) + "), got " + std::to_string(rank));
  int count = 0;
  BWPROF_GPU_CHECK(hipGetDeviceCount(&count));
  if (device < 0 || device >= count)
    BWPROF_INVALID("local_rank: no GPU " + std::to_string(device) + " here (this process sees " + std::to_string(count) + ")");
  const nccl::Library& lib = nccl::library();
  collective_leave();
  auto j = std::make_unique<Job>();
  j->nranks = nranks;
  j->rank = rank;
  j->device = device;
  BWPROF_GPU_CHECK(hipSetDevice(device));
  nccl::UniqueId uid;
  std::copy(id.begin(), id.end(), uid.internal);
  BWPROF_NCCL_CHECK(lib.comm_init_rank(&j->comm, nranks, uid, rank));
  j->barrier = DeviceBuffer(sizeof(float), "barrier");
  j->barrier.fill(0);
  std::lock_guard<std::mutex> g(g_mu);
  job() = std::move(j);
}

void collective_leave() {
  std::unique_ptr<Job> j;
  {
    std::lock_guard<std::mutex> g(g_mu);
    j = std::move(job());
  }
  if (!j) return;
  (void)hipSetDevice(j->device);
  (void)hipDeviceSynchronize();
  j->barrier = DeviceBuffer();
  (void)nccl::library().comm_destroy(j->comm);
}

int collective_job_ranks() {
  std::lock_guard<std::mutex> g(g_mu);
  return job() ? job()->nranks : 0;
}

std::unique_ptr<KernelInstance> make_collective_gpu(Backend& b, const Problem& p) {
  return std::make_unique<CollectiveGpu>(as_gpu(b), p);
}

}  // namespace bwprof
