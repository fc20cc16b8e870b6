/*
 * Input factories shared by the native tests and the CUDA benchmark: random clouds, indices and
 * weights for the PointNet++ operators, PVN3D-like vote scenes for the pose operators, the Stanford
 * bunny.
 */
#ifndef PVN3D_TESTS_TEST_DATA_H
#define PVN3D_TESTS_TEST_DATA_H

#include <cstdint>
#include <random>
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

/* The bunny scene of the bunny tests: the bunny (load_bunny) plus 161 padding rows of zeros (N = 2000),
 * as a depth crop would give; features [1, C=4, N]: xyz transposed plus a constant channel of ones;
 * the stage sizes of a PointNet++ level: npoint 512, nsample 16, radius 0.02. */
struct BunnyScene {
  std::vector<float> xyz;       // [1, N, 3]
  std::vector<float> features;  // [1, C, N]
  int64_t N0 = 0;               // bunny vertices (1839); rows N0..N-1 are padding
  int64_t N = 0;
  static constexpr int64_t B = 1, npoint = 512, S = 16, C = 4;
  static constexpr float radius = 0.02f;
};
BunnyScene bunny_scene(const std::vector<float>& bunny);

/* Where the bunny file is: the --bunny <path> argument, else $PVN3D_BUNNY_FILE, else "". */
std::string bunny_path(int argc, char** argv);
/* PVN3D_REQUIRE_BUNNY=1: a missing bunny file is a failure, not a skip. */
bool bunny_required();

/* ---- pose operators ---- */

/* Row-major rotation by `angle` about the axis (ax, ay, az). */
void axis_angle(double ax, double ay, double az, double angle, double R[9]);
/* A random axis (normal components) and an angle uniform in [0, pi), or the given angle if >= 0. */
void random_rotation(std::mt19937& g, double R[9], double angle = -1);

struct VoteCase {
  int64_t B = 1, K = 9, N = 0;
  std::vector<float> votes;  // [B,K,N,3]
  std::vector<float> mask;   // [B,N]
  std::vector<float> model;  // [K,3] (shared model)
  std::vector<double> Rtrue, ttrue;  // [B,9], [B,3]
};

/* A PVN3D-like scene: model keypoints in a `size` box, a random pose per item (the first item gets
 * `first_angle` if >= 0), each masked point votes for every keypoint with Gaussian noise `sigma`; a
 * fraction `outliers` of the points votes uniformly in a 0.5 m cube instead. mask_ratio of the points
 * is masked. */
VoteCase make_vote_case(uint32_t seed, int64_t B, int64_t K, int64_t N, double sigma, double outliers,
                        double mask_ratio, double first_angle = -1, double size = 0.15);

}  // namespace testdata

#endif
