#include "index_check_internal.h"

#include <atomic>

#include "threads.h"

extern "C" pvn3d_status pvn3d_index_error_describe(const char* op, const char* input, int64_t position,
                                                   int64_t value, int64_t limit) {
  if (position < 0) return PVN3D_OK;
  return pvn3d::fail(PVN3D_ERR_INDEX_OUT_OF_RANGE, "%s: input %s holds index %lld at flat position %lld, outside [0, %lld)",
                     op ? op : "?", input ? input : "?", (long long)value, (long long)position, (long long)limit);
}

namespace pvn3d {

int64_t find_first_bad_index(const int64_t* idx, int64_t count, int64_t limit) {
  // Each range finds its first bad position; the minimum over ranges is the global first.
  std::atomic<int64_t> first{INT64_MAX};
  parallel_for(count, grain_for(1), [&](int64_t begin, int64_t end) {
    if (begin >= first.load(std::memory_order_relaxed)) return;
    const uint64_t ulimit = static_cast<uint64_t>(limit);
    int64_t bad = -1;
    // Branch-free scan in blocks (vectorisable), then locate within the block that has one.
    constexpr int64_t kBlock = 256;
    for (int64_t b = begin; b < end && bad < 0; b += kBlock) {
      const int64_t e = std::min(end, b + kBlock);
      uint64_t any = 0;
      for (int64_t i = b; i < e; ++i) any |= static_cast<uint64_t>(static_cast<uint64_t>(idx[i]) >= ulimit);
      if (any)
        for (int64_t i = b; i < e; ++i)
          if (static_cast<uint64_t>(idx[i]) >= ulimit) { bad = i; break; }
    }
    if (bad >= 0) {
      int64_t cur = first.load(std::memory_order_relaxed);
      while (bad < cur && !first.compare_exchange_weak(cur, bad, std::memory_order_relaxed)) {
      }
    }
  });
  const int64_t f = first.load();
  return f == INT64_MAX ? -1 : f;
}

pvn3d_status check_indices(const char* op, const char* input, const int64_t* idx, int64_t count, int64_t limit) {
  const int64_t p = find_first_bad_index(idx, count, limit);
  if (p < 0) return PVN3D_OK;
  return pvn3d_index_error_describe(op, input, p, idx[p], limit);
}

}  // namespace pvn3d
