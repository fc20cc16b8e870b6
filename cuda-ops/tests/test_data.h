/*
 * Input factories and small helpers shared by the native tests and the CUDA benchmark.
 */
#ifndef PVN3D_TESTS_TEST_DATA_H
#define PVN3D_TESTS_TEST_DATA_H

#include <cstdint>
#include <string>
#include <vector>

namespace testdata {

/* SplitMix64: deterministic across platforms. */
struct Rng {
  uint64_t state;
  explicit Rng(uint64_t seed) : state(seed) {}
  uint64_t next();
  float uniform(float lo, float hi);  // in [lo, hi)
  int64_t below(int64_t n);           // in [0, n)
};

/* [B, N, 3] points uniform in [lo, hi)^3. */
std::vector<float> random_cloud(Rng& rng, int64_t B, int64_t N, float lo, float hi);
/* count floats uniform in [lo, hi). */
std::vector<float> random_floats(Rng& rng, int64_t count, float lo, float hi);
/* count indices uniform in [0, limit). */
std::vector<int64_t> random_indices(Rng& rng, int64_t count, int64_t limit);
/* [B, M, 3] centres: M points picked (with replacement) from each batch element of xyz [B, N, 3],
 * each moved by up to `jitter` per coordinate. */
std::vector<float> centres_from(Rng& rng, const std::vector<float>& xyz, int64_t B, int64_t N, int64_t M, float jitter);
/* [B, n, 3] normalised positive weights (sum 1 per row). */
std::vector<float> random_weights(Rng& rng, int64_t B, int64_t n);

/* The Stanford bunny's 1839 vertices (npm package `bunny`, written by fetch_bunny.sh as text: a count,
 * then one "x y z" line per vertex), scaled so its largest extent is 0.2 and moved to z = 0.6 (a
 * camera-frame object; no vertex is a padding point). False with *why on failure. */
bool load_bunny(const std::string& path, std::vector<float>* xyz, std::string* why);

/* Where the bunny file is: the --bunny <path> argument, else $PVN3D_BUNNY_FILE, else "". */
std::string bunny_path(int argc, char** argv);
/* PVN3D_REQUIRE_BUNNY=1: a missing bunny file is a failure, not a skip. */
bool bunny_required();

}  // namespace testdata

#endif
