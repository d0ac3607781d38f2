// Links (PCIe rates, sysfs reading, NVLink per architecture), the judgement of a row bound by its
// link, BF16 storage, and the collectives' sizes, bus bandwidth factors and reference. On a GPU,
// the transfers and (with two GPUs) the peer copies against their exact check.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include <unistd.h>

#include "bwprof/api.hpp"
#include "bwprof/error.hpp"
#include "bwprof/host_tensor.hpp"
#include "bwprof/link.hpp"
#include "bwprof/roofline.hpp"
#include "collective/collective.hpp"
#include "common/reference.hpp"
#include "test_util.hpp"

using namespace bwprof;
namespace fs = std::filesystem;

TEST(Links, PcieRatesFollowTheLineCodingOfEachGeneration) {
  EXPECT_NEAR(pcie_link(3, 16).gbs, 8.0 * 128 / 130 / 8 * 16, 1e-9);  // 15.75 GB/s
  EXPECT_NEAR(pcie_link(4, 16).gbs, 31.5077, 1e-3);
  EXPECT_NEAR(pcie_link(5, 16).gbs, 63.0154, 1e-3);
  EXPECT_NEAR(pcie_link(1, 1).gbs, 0.25, 1e-12);  // 2.5 GT/s, 8b/10b
  EXPECT_EQ(pcie_link(5, 16).name, "PCIe 5.0 x16");
  EXPECT_EQ(pcie_link(5, 8).gbs * 2, pcie_link(5, 16).gbs);
  // Unknown generation or width: named, no figure.
  EXPECT_FALSE(pcie_link(0, 16).known());
  EXPECT_FALSE(pcie_link(7, 16).known());
  EXPECT_FALSE(pcie_link(4, 0).known());
  EXPECT_EQ(pcie_link(4, 0).kind, "pcie");
}

TEST(Links, LinkSpeedTextMapsToAGeneration) {
  EXPECT_DOUBLE_EQ(parse_link_speed_gts("32.0 GT/s PCIe\n"), 32.0);
  EXPECT_DOUBLE_EQ(parse_link_speed_gts("2.5 GT/s"), 2.5);
  EXPECT_DOUBLE_EQ(parse_link_speed_gts("Unknown"), 0.0);
  EXPECT_DOUBLE_EQ(parse_link_speed_gts(""), 0.0);
  EXPECT_EQ(pcie_generation_of(2.5), 1);
  EXPECT_EQ(pcie_generation_of(8), 3);
  EXPECT_EQ(pcie_generation_of(16), 4);
  EXPECT_EQ(pcie_generation_of(32), 5);
  EXPECT_EQ(pcie_generation_of(64), 6);
  EXPECT_EQ(pcie_generation_of(12), 0);
}

namespace {

void write(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << text;
}

// /sys/devices/pci0000:00/<bridge>/<gpu> and the /sys/bus/pci/devices/<gpu> link to it.
fs::path fake_sysfs(const std::string& gpu_speed, int gpu_width, const std::string& port_speed, int port_width) {
  const fs::path root = fs::temp_directory_path() / ("bwprof_sysfs_" + std::to_string(::getpid()) + gpu_speed +
                                                     port_speed + std::to_string(gpu_width + 100 * port_width));
  fs::remove_all(root);
  const fs::path bridge = root / "devices/pci0000:00/0000:00:01.0";
  const fs::path gpu = bridge / "0000:01:00.0";
  write(gpu / "max_link_speed", gpu_speed);
  write(gpu / "max_link_width", std::to_string(gpu_width));
  write(gpu / "current_link_speed", "2.5 GT/s PCIe");  // idle: must not be what is reported
  if (!port_speed.empty()) {
    write(bridge / "max_link_speed", port_speed);
    write(bridge / "max_link_width", std::to_string(port_width));
  }
  fs::create_directories(root / "bus/pci/devices");
  fs::create_directory_symlink(gpu, root / "bus/pci/devices/0000:01:00.0");
  return root;
}

}  // namespace

TEST(Links, SysfsGivesTheSlowerOfTheGpuAndItsPortAtTheirMaximum) {
  fs::path a = fake_sysfs("32.0 GT/s PCIe", 16, "32.0 GT/s PCIe", 16);
  Link l = pcie_link_from_sysfs(a.string(), "0000:01:00.0");
  EXPECT_EQ(l.name, "PCIe 5.0 x16");
  EXPECT_NEAR(l.gbs, 63.0154, 1e-3);
  // A Gen5 GPU in a Gen4 x8 slot runs at Gen4 x8.
  fs::path b = fake_sysfs("32.0 GT/s PCIe", 16, "16.0 GT/s PCIe", 8);
  l = pcie_link_from_sysfs(b.string(), "0000:01:00.0");
  EXPECT_EQ(l.name, "PCIe 4.0 x8");
  // A port without link files (a root complex) leaves the GPU's own link.
  fs::path c = fake_sysfs("16.0 GT/s PCIe", 16, "", 0);
  EXPECT_EQ(pcie_link_from_sysfs(c.string(), "0000:01:00.0").name, "PCIe 4.0 x16");
  // No such device: an empty link, not an error.
  EXPECT_TRUE(pcie_link_from_sysfs(c.string(), "0000:99:00.0").kind.empty());
  for (auto& p : {a, b, c}) fs::remove_all(p);
}

TEST(Links, NvlinkPerLinkBandwidthByArchitecture) {
  EXPECT_DOUBLE_EQ(nvlink_gbs_per_link("sm_90"), 25.0);
  EXPECT_DOUBLE_EQ(nvlink_gbs_per_link("sm_90a"), 25.0);
  EXPECT_DOUBLE_EQ(nvlink_gbs_per_link("sm_80"), 25.0);
  EXPECT_DOUBLE_EQ(nvlink_gbs_per_link("sm_100"), 50.0);
  EXPECT_DOUBLE_EQ(nvlink_gbs_per_link("sm_61"), 0.0);
  EXPECT_DOUBLE_EQ(nvlink_gbs_per_link("gfx942"), 0.0);
  EXPECT_DOUBLE_EQ(c2c_link().gbs, 450.0);
}

TEST(Links, ARowBoundByItsLinkIsJudgedAgainstTheLink) {
  Work w;
  w.bytes = 1e9;
  w.time_us = 20000;  // 50 GB/s
  Roofs r;
  r.bandwidth_gbs = r.bandwidth_theoretical_gbs = 63.0;
  r.link = "PCIe 5.0 x16";
  Judgement j = judge(w, r);
  EXPECT_EQ(j.bound, "link");
  EXPECT_NEAR(j.bandwidth_pct_peak, 100.0 * 50 / 63, 1e-9);
  EXPECT_EQ(j.grade, "good");
  EXPECT_NE(j.bottleneck.find("link-bound"), std::string::npos) << j.bottleneck;
  EXPECT_NE(j.bottleneck.find("PCIe 5.0 x16"), std::string::npos) << j.bottleneck;
  EXPECT_FALSE(j.above_peak);
  // A small copy: latency, said in the link's words.
  w.bytes = 4096;
  w.time_us = 8;
  j = judge(w, r);
  EXPECT_EQ(j.bound, "latency");
  EXPECT_NE(j.bottleneck.find("link's bandwidth"), std::string::npos) << j.bottleneck;
  // Faster than the link: flagged, and the text says the data did not cross it.
  w.bytes = 1e9;
  w.time_us = 10000;  // 100 GB/s
  j = judge(w, r);
  EXPECT_TRUE(j.above_peak);
  EXPECT_NE(j.bottleneck.find("did not cross"), std::string::npos) << j.bottleneck;
  // A link whose bandwidth is not known: only the rates, and the text names the link.
  r.bandwidth_gbs = r.bandwidth_theoretical_gbs = 0;
  r.link = "xGMI";
  j = judge(w, r);
  EXPECT_EQ(j.bound, "unknown");
  EXPECT_NE(j.bottleneck.find("xGMI"), std::string::npos) << j.bottleneck;
  // Without a link, the same work is memory-bound as before.
  r = Roofs{};
  r.bandwidth_gbs = 200;
  w.time_us = 10000;
  EXPECT_EQ(judge(w, r).bound, "memory");
}

TEST(Links, Bf16StorageRoundsToNearestEven) {
  EXPECT_EQ(parse_dtype("bf16"), DType::kBF16);
  EXPECT_EQ(parse_dtype("bfloat16"), DType::kBF16);
  EXPECT_STREQ(to_string(DType::kBF16), "bf16");
  EXPECT_EQ(dtype_size(DType::kBF16), 2u);
  for (float v : {0.0f, 1.0f, -2.5f, 0.125f, 3.0f * 65536.0f, -std::ldexp(1.0f, -100)}) EXPECT_EQ(bf16_to_float(float_to_bf16(v)), v);
  EXPECT_EQ(bf16_to_float(float_to_bf16(1.0f + 1.0f / 256)), 1.0f);  // a tie: to the even neighbour
  EXPECT_EQ(bf16_to_float(float_to_bf16(1.0f + 3.0f / 256)), 1.0f + 4.0f / 256);
  EXPECT_TRUE(std::isnan(bf16_to_float(float_to_bf16(NAN))));
  EXPECT_TRUE(std::isinf(bf16_to_float(float_to_bf16(INFINITY))));
  HostTensor t(DType::kBF16, 3);
  t.set(1, 0.375f);
  EXPECT_EQ(t.get(1), 0.375f);
  try {
    parse_dtype("bf8");
    FAIL();
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("bf16"), std::string::npos);
  }
}

TEST(Collectives, BusBandwidthFactorsAreNcclTests) {
  EXPECT_DOUBLE_EQ(busbw_factor(Collective::kAllReduce, 8), 2.0 * 7 / 8);
  EXPECT_DOUBLE_EQ(busbw_factor(Collective::kAllGather, 8), 7.0 / 8);
  EXPECT_DOUBLE_EQ(busbw_factor(Collective::kReduceScatter, 2), 0.5);
  EXPECT_DOUBLE_EQ(busbw_factor(Collective::kAllToAll, 4), 0.75);
  EXPECT_DOUBLE_EQ(busbw_factor(Collective::kBroadcast, 8), 1.0);
  EXPECT_DOUBLE_EQ(busbw_factor(Collective::kAllReduce, 1), 0.0);
  EXPECT_THROW(parse_collective("gemm"), InvalidArgument);
}

TEST(Collectives, SizesSplitIntoWholeElementsPerRank) {
  // all_gather's size is the gathered output: each of 3 ranks sends a third.
  auto n = collective_counts(Collective::kAllGather, 3 * 4 * 100, 3, DType::kF32);
  EXPECT_EQ(n.in, 100);
  EXPECT_EQ(n.out, 300);
  EXPECT_EQ(n.call, 100);
  n = collective_counts(Collective::kReduceScatter, 1024, 2, DType::kF16);
  EXPECT_EQ(n.in, 512);
  EXPECT_EQ(n.out, 256);
  n = collective_counts(Collective::kAllToAll, 1024, 4, DType::kF32);
  EXPECT_EQ(n.in, 256);
  EXPECT_EQ(n.call, 64);
  // Rounded down to a multiple of ranks x element for the split collectives only.
  EXPECT_EQ(collective_bytes(Collective::kAllGather, 1000, 3, DType::kF32), 996);
  EXPECT_EQ(collective_bytes(Collective::kAllReduce, 1001, 3, DType::kF32), 1000);
  EXPECT_EQ(collective_bytes(Collective::kAllGather, 8, 3, DType::kF32), 0);
}

TEST(Collectives, ReferenceIsTheDefinitionOfEachCollective) {
  const std::int64_t ranks = 4;
  const auto n = collective_counts(Collective::kAllToAll, 4 * 4 * 8, ranks, DType::kF32);  // 32 elements each
  // Inputs: multiples of 1/8 in [-2, 2], never zero, different per rank.
  int same = 0;
  for (std::int64_t i = 0; i < 64; ++i) {
    const float v = collective_input(1, i);
    EXPECT_NE(v, 0.0f);
    EXPECT_LE(std::fabs(v), 2.0f);
    EXPECT_EQ(v * 8, std::round(v * 8));
    same += v == collective_input(2, i);
  }
  EXPECT_LT(same, 20);
  // all_to_all: element j of chunk k on rank r is element j of chunk r on rank k.
  const std::int64_t chunk = n.in / ranks;
  EXPECT_EQ(collective_gold(Collective::kAllToAll, ranks, 2, 3 * chunk + 5, n), collective_input(3, 2 * chunk + 5));
  const auto ar = collective_counts(Collective::kAllReduce, 64, ranks, DType::kF32);
  double s = 0;
  for (int k = 0; k < ranks; ++k) s += collective_input(k, 7);
  EXPECT_EQ(collective_gold(Collective::kAllReduce, ranks, 3, 7, ar), s);
  const auto ag = collective_counts(Collective::kAllGather, 64, ranks, DType::kF32);
  EXPECT_EQ(collective_gold(Collective::kAllGather, ranks, 0, 2 * ag.in + 1, ag), collective_input(2, 1));
  const auto rs = collective_counts(Collective::kReduceScatter, 64, ranks, DType::kF32);
  s = 0;
  for (int k = 0; k < ranks; ++k) s += collective_input(k, 1 * rs.out + 2);
  EXPECT_EQ(collective_gold(Collective::kReduceScatter, ranks, 1, 2, rs), s);
  EXPECT_EQ(collective_gold(Collective::kBroadcast, ranks, 3, 9, ar), collective_input(0, 9));
}

TEST(Collectives, BytesCheckCountsEveryDifferingByte) {
  std::uint8_t a[100], b[100];
  fill_random_bytes(a, sizeof a, 7);
  std::copy(a, a + 100, b);
  EXPECT_TRUE(bytes_check(a, b, 100).ok);
  b[99] ^= 1;
  b[3] ^= 0x80;
  Check c = bytes_check(a, b, 100);
  EXPECT_FALSE(c.ok);
  EXPECT_DOUBLE_EQ(c.max_rel_error, 0.02);
  std::uint8_t z[10] = {0x5a, 0x5a, 0x5a, 0x5a, 0x5a, 0x5a, 0x5a, 0x5a, 0x5a, 0x5a};
  EXPECT_TRUE(bytes_check(z, nullptr, 10, 0x5a).ok);
  EXPECT_FALSE(bytes_check(z, nullptr, 10, 0x5b).ok);
  // The same bytes whatever the split of the work (each word from its index).
  std::uint8_t big1[1 << 12], big2[1 << 12];
  fill_random_bytes(big1, sizeof big1, 3);
  fill_random_bytes(big2, sizeof big2, 3);
  EXPECT_EQ(std::memcmp(big1, big2, sizeof big1), 0);
  fill_random_bytes(big2, sizeof big2, 4);
  EXPECT_NE(std::memcmp(big1, big2, sizeof big1), 0);
}

TEST(Links, TransferAndCollectiveFamiliesAreListedAndNeedAGpu) {
  for (const char* k : {"h2d", "d2h", "d2d", "memset", "p2p_copy", "all_reduce", "all_gather", "reduce_scatter",
                        "all_to_all", "broadcast"}) {
    const KernelFamily& f = find_kernel(k);
    for (auto& v : f.variants) EXPECT_EQ(v.backend, "gpu") << k;
    try {
      measure(k, "fp32", "cpu", "", {}, RunOptions{});
      FAIL() << k << " ran on the CPU";
    } catch (const InvalidArgument& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find(k), std::string::npos) << what;
      EXPECT_TRUE(what.find("gpu") != std::string::npos || what.find("GPU") != std::string::npos) << what;
    }
  }
  EXPECT_FALSE(find_kernel("all_reduce").default_suite);
  EXPECT_FALSE(find_kernel("p2p_copy").default_suite);
  EXPECT_TRUE(find_kernel("h2d").default_suite);
}

TEST(Links, CollectiveLibraryMissingIsAnErrorNamingIt) {
  const char* old = std::getenv("BWPROF_NCCL_LIBRARY");
  if (old) GTEST_SKIP() << "BWPROF_NCCL_LIBRARY is set";
  // The library is opened once a process: on a GPU machine the collective tests before this one have
  // opened it, and the setting below would change nothing. So the check runs in a fresh process (the
  // threadsafe death-test style runs this test alone in a new one): exit 0 for the error naming the
  // missing file (or a build without GPU support), 1 if a library loaded, 2 for another message.
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        ::setenv("BWPROF_NCCL_LIBRARY", "/nonexistent/libnccl-missing.so", 1);
        int code = 1;
        try {
          collective_library();
        } catch (const InvalidArgument& e) {
          const std::string what = e.what();
          code = what.find("libnccl-missing.so") != std::string::npos || what.find("no GPU support") != std::string::npos
                     ? 0
                     : 2;
          if (code) std::fprintf(stderr, "%s\n", what.c_str());
        }
        std::exit(code);
      },
      ::testing::ExitedWithCode(0), "");
}

// ---- on a GPU -------------------------------------------------------------------------------

namespace {
RunOptions quick() {
  RunOptions o;
  o.warmup = 1;
  o.min_repeats = 3;
  o.min_time_s = 0;
  o.max_time_s = 0.5;
  return o;
}
}  // namespace

TEST(GpuLinksSmall, TransfersAreExactAndJudgedAgainstTheirLink) {
  if (!have_gpu()) GTEST_SKIP() << "no GPU";
  for (std::int64_t bytes : {1, 4093, 1 << 20, (1 << 22) + 3}) {
    for (const char* k : {"h2d", "d2h"})
      for (const char* v : {"pinned", "pageable"}) {
        Measurement m = measure(k, "fp32", "gpu:0", v, {{"bytes", std::to_string(bytes)}}, quick());
        EXPECT_TRUE(m.verified) << k << " " << v << " " << bytes;
        EXPECT_EQ(m.bytes_written, static_cast<double>(bytes));
        EXPECT_FALSE(m.peaks.link.empty()) << k;
        EXPECT_TRUE(m.bound == "link" || m.bound == "latency" || m.bound == "unknown") << m.bound;
      }
    for (const char* k : {"d2d", "memset"}) {
      Measurement m = measure(k, "fp32", "gpu:0", "", {{"bytes", std::to_string(bytes)}}, quick());
      EXPECT_TRUE(m.verified) << k << " " << bytes;
      EXPECT_TRUE(m.peaks.link.empty()) << k;  // device memory: the memory roof
    }
  }
}

TEST(GpuLinksSmall, PeerCopiesAreExactBothWays) {
  if (gpu_count() < 2) GTEST_SKIP() << "fewer than two GPUs";
  for (const char* dir : {"uni", "bi"})
    for (const char* src : {"gpu:0", "gpu:1"}) {
      const std::string peer = std::string(src) == "gpu:0" ? "1" : "0";
      Measurement m = measure("p2p_copy", "fp32", src, "", {{"peer", peer}, {"bytes", "1048579"}, {"direction", dir}},
                              quick());
      EXPECT_TRUE(m.verified) << src << " " << dir;
      EXPECT_FALSE(m.peaks.link.empty());
    }
  EXPECT_THROW(measure("p2p_copy", "fp32", "gpu:0", "", {{"peer", "0"}}, quick()), InvalidArgument);
}

TEST(GpuLinksSmall, PeerCopyToAMissingGpuIsAnError) {
  if (!have_gpu()) GTEST_SKIP() << "no GPU";
  try {
    measure("p2p_copy", "fp32", "gpu:0", "", {{"peer", "64"}, {"bytes", "4096"}}, quick());
    FAIL();
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("peer"), std::string::npos) << e.what();
  }
}
