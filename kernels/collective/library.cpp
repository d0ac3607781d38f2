// The collective library through dlopen (plain C++: every build compiles it, so a build without a
// GPU still says clearly why collectives cannot run).
#include <dlfcn.h>

#include <cstdlib>
#include <mutex>

#include "bwprof/environment.hpp"
#include "bwprof/error.hpp"
#include "collective/nccl_api.hpp"

namespace bwprof {
namespace nccl {

namespace {

std::mutex g_mu;
std::vector<std::string>& search_dirs() {
  static auto* d = new std::vector<std::string>();
  return *d;
}

template <class F>
bool bind(void* lib, F& f, const char* name) {
  f = reinterpret_cast<F>(dlsym(lib, name));
  return f != nullptr;
}

// Opens `path` and binds every call; an error text (empty on success).
std::string open_library(const std::string& path, Library& out) {
  void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);
  if (!lib) {
    const char* e = dlerror();
    return e ? e : "dlopen failed";
  }
  Library l;
  l.path = path;
  bool ok = bind(lib, l.get_version, "ncclGetVersion") && bind(lib, l.get_unique_id, "ncclGetUniqueId") &&
            bind(lib, l.comm_init_rank, "ncclCommInitRank") && bind(lib, l.comm_init_all, "ncclCommInitAll") &&
            bind(lib, l.comm_destroy, "ncclCommDestroy") && bind(lib, l.comm_count, "ncclCommCount") &&
            bind(lib, l.get_error_string, "ncclGetErrorString") && bind(lib, l.all_reduce, "ncclAllReduce") &&
            bind(lib, l.all_gather, "ncclAllGather") && bind(lib, l.reduce_scatter, "ncclReduceScatter") &&
            bind(lib, l.broadcast, "ncclBroadcast") && bind(lib, l.send, "ncclSend") &&
            bind(lib, l.recv, "ncclRecv") && bind(lib, l.group_start, "ncclGroupStart") &&
            bind(lib, l.group_end, "ncclGroupEnd");
  bind(lib, l.comm_get_async_error, "ncclCommGetAsyncError");  // optional
  if (!ok) return path + " lacks a collective call bwprof needs (an NCCL older than 2.7?)";
  l.get_version(&l.version);
  l.name = path.find("rccl") != std::string::npos ? "RCCL" : "NCCL";
  out = l;
  return "";
}

}  // namespace

const char* library_soname() {
#ifdef BWPROF_GPU_HIP
  return "librccl.so.1";
#else
  return "libnccl.so.2";
#endif
}

std::string Library::version_text() const {
  const int major = version >= 10000 ? version / 10000 : version / 1000;
  const int minor = version >= 10000 ? version / 100 % 100 : version / 100 % 10;
  const int patch = version % 100;
  return name + " " + std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
}

void add_search_dir(const std::string& dir) {
  std::lock_guard<std::mutex> g(g_mu);
  for (auto& d : search_dirs())
    if (d == dir) return;
  search_dirs().push_back(dir);
}

const Library& library() {
  static Library lib;
  static bool loaded = false;
  std::lock_guard<std::mutex> g(g_mu);
  if (loaded) return lib;
  std::vector<std::string> tried;
  std::string why;
  auto attempt = [&](const std::string& path) {
    const std::string e = open_library(path, lib);
    if (e.empty()) return true;
    tried.push_back(path);
    why = e;
    return false;
  };
  const std::string soname = library_soname();
  if (const char* f = env::nccl_library()) {
    loaded = attempt(f);
  } else {
    loaded = attempt(soname);
    std::vector<std::string> dirs;
    if (const char* p = env::nccl_path()) {
      std::string s = p;
      for (std::size_t a = 0; a <= s.size();) {
        std::size_t b = s.find(':', a);
        if (b == std::string::npos) b = s.size();
        if (b > a) dirs.push_back(s.substr(a, b - a));
        a = b + 1;
      }
    }
    for (auto& d : search_dirs()) dirs.push_back(d);
#ifdef BWPROF_GPU_HIP
    dirs.push_back("/opt/rocm/lib");
#endif
    for (std::size_t i = 0; !loaded && i < dirs.size(); ++i) loaded = attempt(dirs[i] + "/" + soname);
  }
  if (!loaded) {
    std::string list;
    for (auto& t : tried) list += (list.empty() ? "" : ", ") + t;
    BWPROF_INVALID(std::string("collectives need ") + (soname[3] == 'r' ? "RCCL" : "NCCL") + " (" + soname +
                   "), which could not be loaded (tried " + list + "; last error: " + why +
                   "); set BWPROF_NCCL_LIBRARY to the library's path, or install it (pip install nvidia-nccl-cu12 "
                   "puts one beside PyTorch)");
  }
  return lib;
}

void check(Result r, const char* call, const char* file, int line) {
  if (r == kSuccess) return;
  const Library& l = library();
  const char* msg = l.get_error_string ? l.get_error_string(r) : "error";
  throw Error(located(std::string(call) + " failed: " + msg + " (" + l.version_text() + ")", file, line));
}

}  // namespace nccl
}  // namespace bwprof
