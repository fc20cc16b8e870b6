/*
 * The floor of the tiny-model comparison (TinyModelBenchmark): add16.onnx (c = a + b, float[16]) run
 * in a plain C loop over ORT's C API, with the same session settings as the Java benchmarks (CPU
 * provider, one intra-op thread). Prints one JSON object with the median nanoseconds per run of:
 *   preallocated   inputs and output made once, Run into the preallocated output
 *                  (compare TinyModelBenchmark.oursPreallocated)
 *   reuse_inputs   inputs made once, ORT allocates the output, ReleaseValue after each run
 *                  (compare oursReuseInputs / jniReuseInputs)
 *   fresh          inputs made from a host array per run (CreateTensorWithDataAsOrtValue over a copy),
 *                  ORT output, copied out, all released (compare oursFresh / jniFresh)
 *   bound          inputs and the preallocated output bound once to an OrtIoBinding, RunWithBinding
 *                  per run (compare IoBindingBenchmark.ioBindingRun)
 * Each run is timed alone with clock_gettime(CLOCK_MONOTONIC), as JMH's sample time does.
 *
 * Build (the header folder is never committed; the benchmark scripts pass it):
 *   gcc -O2 -std=c11 -I<ORT include dir> add16_floor.c -L<dir of libonnxruntime.so> -lonnxruntime \
 *       -Wl,-rpath,<that dir> -o add16_floor
 *   ./add16_floor <add16.onnx> [runs per variant, default 200000] [warm-up runs, default 20000]
 */
#define _POSIX_C_SOURCE 199309L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "onnxruntime_c_api.h"

static const OrtApi* ort;

static void check(OrtStatus* s, const char* what) {
  if (s != NULL) {
    fprintf(stderr, "add16_floor: %s: %s\n", what, ort->GetErrorMessage(s));
    ort->ReleaseStatus(s);
    exit(1);
  }
}

static int64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (int64_t)t.tv_sec * 1000000000LL + t.tv_nsec;
}

static int cmp_i64(const void* a, const void* b) {
  int64_t x = *(const int64_t*)a, y = *(const int64_t*)b;
  return (x > y) - (x < y);
}

static int64_t median(int64_t* v, size_t n) {
  qsort(v, n, sizeof *v, cmp_i64);
  return v[n / 2];
}

enum variant { PREALLOCATED, REUSE_INPUTS, FRESH, BOUND };

static OrtSession* session;
static OrtMemoryInfo* cpu;
static float data[16];
static float a_buf[16], b_buf[16], c_buf[16], out_copy[16];
static OrtValue *a, *b, *c;
static OrtIoBinding* binding;
static const int64_t shape[1] = {16};
static const char* in_names[2] = {"a", "b"};
static const char* out_names[1] = {"c"};

static OrtValue* wrap(float* p) {
  OrtValue* v = NULL;
  check(ort->CreateTensorWithDataAsOrtValue(cpu, p, sizeof(float) * 16, shape, 1,
                                            ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, &v), "CreateTensorWithDataAsOrtValue");
  return v;
}

static void one_run(enum variant which) {
  if (which == PREALLOCATED) {
    const OrtValue* ins[2] = {a, b};
    check(ort->Run(session, NULL, in_names, ins, 2, out_names, 1, &c), "Run");
  } else if (which == BOUND) {
    check(ort->RunWithBinding(session, NULL, binding), "RunWithBinding");
  } else if (which == REUSE_INPUTS) {
    const OrtValue* ins[2] = {a, b};
    OrtValue* out = NULL;
    check(ort->Run(session, NULL, in_names, ins, 2, out_names, 1, &out), "Run");
    ort->ReleaseValue(out);
  } else {
    float* x = malloc(sizeof data);
    float* y = malloc(sizeof data);
    memcpy(x, data, sizeof data);
    memcpy(y, data, sizeof data);
    OrtValue* xv = wrap(x);
    OrtValue* yv = wrap(y);
    const OrtValue* ins[2] = {xv, yv};
    OrtValue* out = NULL;
    check(ort->Run(session, NULL, in_names, ins, 2, out_names, 1, &out), "Run");
    float* r = NULL;
    check(ort->GetTensorMutableData(out, (void**)&r), "GetTensorMutableData");
    memcpy(out_copy, r, sizeof out_copy);
    ort->ReleaseValue(out);
    ort->ReleaseValue(xv);
    ort->ReleaseValue(yv);
    free(x);
    free(y);
  }
}

static int64_t measure(enum variant which, long runs, long warmup, int64_t* t) {
  for (long i = 0; i < warmup; ++i) one_run(which);
  for (long i = 0; i < runs; ++i) {
    int64_t s = now_ns();
    one_run(which);
    t[i] = now_ns() - s;
  }
  return median(t, (size_t)runs);
}

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s add16.onnx [runs] [warmup]\n", argv[0]);
    return 2;
  }
  long runs = argc > 2 ? atol(argv[2]) : 200000;
  long warmup = argc > 3 ? atol(argv[3]) : 20000;
  if (runs < 1) runs = 1;
  const OrtApiBase* base = OrtGetApiBase();
  ort = base->GetApi(ORT_API_VERSION);
  if (ort == NULL) {
    fprintf(stderr, "add16_floor: %s does not serve API version %d\n", base->GetVersionString(), ORT_API_VERSION);
    return 1;
  }
  OrtEnv* env = NULL;
  check(ort->CreateEnv(ORT_LOGGING_LEVEL_WARNING, "add16_floor", &env), "CreateEnv");
  OrtSessionOptions* opts = NULL;
  check(ort->CreateSessionOptions(&opts), "CreateSessionOptions");
  check(ort->SetIntraOpNumThreads(opts, 1), "SetIntraOpNumThreads");
  check(ort->CreateSession(env, argv[1], opts, &session), "CreateSession");
  check(ort->CreateCpuMemoryInfo(OrtArenaAllocator, OrtMemTypeDefault, &cpu), "CreateCpuMemoryInfo");
  for (int i = 0; i < 16; ++i) data[i] = a_buf[i] = b_buf[i] = i * 0.5f;
  a = wrap(a_buf);
  b = wrap(b_buf);
  c = wrap(c_buf);
  one_run(PREALLOCATED);
  if (c_buf[3] != 3.0f) {
    fprintf(stderr, "add16_floor: wrong result %g\n", c_buf[3]);
    return 1;
  }
  int64_t* t = malloc(sizeof(int64_t) * (size_t)runs);
  int64_t pre = measure(PREALLOCATED, runs, warmup, t);
  int64_t reuse = measure(REUSE_INPUTS, runs, warmup, t);
  int64_t fresh = measure(FRESH, runs, warmup, t);
  check(ort->CreateIoBinding(session, &binding), "CreateIoBinding");
  check(ort->BindInput(binding, "a", a), "BindInput");
  check(ort->BindInput(binding, "b", b), "BindInput");
  check(ort->BindOutput(binding, "c", c), "BindOutput");
  int64_t bound = measure(BOUND, runs, warmup, t);
  ort->ReleaseIoBinding(binding);
  printf("{\"ort_version\": \"%s\", \"api_version\": %d, \"runs\": %ld, \"median_ns\": "
         "{\"preallocated\": %lld, \"reuse_inputs\": %lld, \"fresh\": %lld, \"bound\": %lld}}\n",
         base->GetVersionString(), ORT_API_VERSION, runs, (long long)pre, (long long)reuse, (long long)fresh,
         (long long)bound);
  free(t);
  ort->ReleaseValue(a);
  ort->ReleaseValue(b);
  ort->ReleaseValue(c);
  ort->ReleaseMemoryInfo(cpu);
  ort->ReleaseSession(session);
  ort->ReleaseSessionOptions(opts);
  ort->ReleaseEnv(env);
  return 0;
}
