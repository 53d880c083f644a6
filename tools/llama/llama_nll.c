// llama_nll: the summed next-token NLL of token rows under llama.cpp, and its tokens/s: the llama.cpp
// side of tools/bench/bench-eval.sh (built by tools/llama/install.sh against node-llama-cpp's prebuilt
// libllama and the headers of the same llama.cpp release).
//
//   llama_nll MODEL.gguf TOKENS.bin SEQ NSEQ THREADS [OUT.json] [options]
//     TOKENS.bin       uint16 token ids (tools/bench/bench_eval.py setup writes one)
//     --eos ID         document boundaries: a document ends after each ID (omn-audit's --eos)
//     --form F         packed (default): row i = tokens [i*SEQ, (i+1)*SEQ), each document of a row
//                        in its own llama.cpp sequence (positions from 0, attention within the
//                        document), as omn-audit's packed rows and tests/parity/reference_model.py;
//                      historical: EOS stripped first, every row one document (needs --eos);
//                      without --eos every row is one document.
//     --fa on|off      flash attention (default on). With it on, llama.cpp casts an F32 K/V to F16
//                      before the kernel (llama-graph.cpp build_attn_mha), so F32 attention end to
//                      end needs --fa off --kv f32 (K^T Q, softmax and V products in F32)
//     --kv f32|f16|bf16  K/V cache type (default: f32 with --fa off, else f16, llama.cpp's own
//                      default; the CPU flash attention has its tiled kernel for F32 and F16 K/V only,
//                      a BF16 cache takes the slower per-row fallback)
//     --warmup N       untimed decodes of the first row first (default 1)
//
// CPU only (the libggml-cpu variant for this ISA, loaded from the prebuilt folder), n_ctx = n_batch =
// n_ubatch = SEQ, one unified KV buffer; per row the memory is cleared and ONE llama_decode of the
// whole row returns logits for every position. The NLL of each scored token is computed in double
// from those float logits (log-sum-exp minus the target's logit; OpenMP over THREADS threads, summed
// in position order). Scored tokens: position t predicts t+1 when both are in the same document (omn-audit's and
// the reference's count), so NSEQ*(SEQ-1) for one-document rows.
//
// Timing: tokens_per_second counts only the llama_decode calls (+ llama_synchronize, which the logits
// copy to the host is part of); tokens_per_second_with_nll adds the NLL computation (omn-audit's own
// tokens/s times its whole scoring loop, log-softmax included).
//
// Prints one line: "tokens/s DECODE with-nll WITH nll_sum SUM scored N rows R"; OUT.json adds the rows'
// sums and the backend (which libggml-cpu variant was loaded and its features).
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ggml-backend.h"
#include "ggml.h"
#include "llama.h"

#ifndef LLAMA_NLL_LIBDIR
#define LLAMA_NLL_LIBDIR "."
#endif

static void die(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "llama_nll: ");
  vfprintf(stderr, fmt, ap);
  fprintf(stderr, "\n");
  va_end(ap);
  exit(1);
}

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static char loaded[4096];  // ggml's "loaded CPU backend from ..." line
static int verbose = 0;
static void logcb(enum ggml_log_level level, const char* text, void* ud) {
  (void)ud;
  if (strstr(text, "loaded") && strstr(text, "backend from") && strlen(loaded) + strlen(text) < sizeof loaded - 1) strcat(loaded, text);
  if (verbose || level == GGML_LOG_LEVEL_ERROR || level == GGML_LOG_LEVEL_WARN) fputs(text, stderr);
}

static long parse_int(const char* s, const char* what, long lo, long hi) {
  char* end;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (errno || *end || end == s || v < lo || v > hi) die("%s must be an integer in [%ld, %ld], got '%s'", what, lo, hi, s);
  return v;
}

int main(int argc, char** argv) {
  const char* pos_args[6] = {0};
  int npos = 0;
  long eos = -1, warmup = 1;
  const char* form = "packed";
  const char* kv = NULL;
  const char* variant = NULL;  // --cpu-variant haswell: that libggml-cpu-<variant>.so, not the best one
  int fa = 1;
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--eos") && i + 1 < argc) eos = parse_int(argv[++i], "--eos", 0, 65535);
    else if (!strcmp(argv[i], "--form") && i + 1 < argc) form = argv[++i];
    else if (!strcmp(argv[i], "--kv") && i + 1 < argc) kv = argv[++i];
    else if (!strcmp(argv[i], "--fa") && i + 1 < argc) {
      ++i;
      if (strcmp(argv[i], "on") && strcmp(argv[i], "off")) die("--fa must be on or off, got '%s'", argv[i]);
      fa = !strcmp(argv[i], "on");
    }
    else if (!strcmp(argv[i], "--warmup") && i + 1 < argc) warmup = parse_int(argv[++i], "--warmup", 0, 100);
    else if (!strcmp(argv[i], "--verbose")) verbose = 1;
    else if (!strcmp(argv[i], "--cpu-variant") && i + 1 < argc) variant = argv[++i];
    else if (argv[i][0] == '-' && argv[i][1] == '-') die("unknown option %s", argv[i]);
    else if (npos < 6) pos_args[npos++] = argv[i];
    else die("too many arguments");
  }
  if (npos < 5) {
    fprintf(stderr, "usage: llama_nll MODEL.gguf TOKENS.bin SEQ NSEQ THREADS [OUT.json] [--eos ID] [--form packed|historical] "
                    "[--fa on|off] [--kv f32|f16|bf16] [--warmup N] [--cpu-variant NAME] [--verbose]\n");
    return 2;
  }
  const char* model_path = pos_args[0];
  const char* tok_path = pos_args[1];
  const long seq = parse_int(pos_args[2], "SEQ", 2, 1 << 20);
  const long nseq = parse_int(pos_args[3], "NSEQ", 1, 1 << 30);
  const int threads = (int)parse_int(pos_args[4], "THREADS", 1, 4096);
  const char* out_path = npos > 5 ? pos_args[5] : NULL;
  const int historical = !strcmp(form, "historical");
  if (!historical && strcmp(form, "packed")) die("--form must be packed or historical, got '%s'", form);
  if (historical && eos < 0) die("--form historical strips EOS: give --eos");

  // tokens, and the document id of each (a document ends after an EOS)
  FILE* f = fopen(tok_path, "rb");
  if (!f) die("cannot open %s: %s", tok_path, strerror(errno));
  fseek(f, 0, SEEK_END);
  const long nbytes = ftell(f);
  fseek(f, 0, SEEK_SET);
  const long n_all = nbytes / 2;
  uint16_t* raw = malloc((size_t)n_all * 2);
  if (!raw || fread(raw, 2, (size_t)n_all, f) != (size_t)n_all) die("cannot read %s", tok_path);
  fclose(f);
  long n = 0;
  int32_t* tok = malloc((size_t)n_all * sizeof *tok);
  int64_t* doc = malloc((size_t)n_all * sizeof *doc);
  int64_t d = 0;
  for (long i = 0; i < n_all; ++i) {
    if (historical && raw[i] == eos) continue;
    tok[n] = raw[i];
    doc[n] = historical ? 0 : d;
    ++n;
    if (!historical && eos >= 0 && raw[i] == eos) ++d;
  }
  if (n < nseq * seq) die("%s yields %ld rows of %ld tokens in the %s form, %ld asked", tok_path, n / seq, seq, form, nseq);

  // documents per row: the llama.cpp sequences one decode needs
  int max_docs = 1;
  for (long r = 0; r < nseq; ++r) {
    const long s = r * seq;
    int k = (int)(doc[s + seq - 1] - doc[s] + 1);
    if (k > max_docs) max_docs = k;
  }

  llama_log_set(logcb, NULL);
  if (variant) {  // one ISA level on purpose (haswell: the AVX2 kernels on an AVX-512 host)
    char lib[4096];
    snprintf(lib, sizeof lib, "%s/libggml-cpu-%s.so", LLAMA_NLL_LIBDIR, variant);
    if (!ggml_backend_load(lib)) die("cannot load the CPU backend %s", lib);
  } else {
    ggml_backend_load_all_from_path(LLAMA_NLL_LIBDIR);  // the CPU backend is a loadable variant per ISA
  }
  llama_backend_init();
  ggml_backend_dev_t cpu = ggml_backend_dev_by_type(GGML_BACKEND_DEVICE_TYPE_CPU);
  if (!cpu) die("no CPU backend found in %s", LLAMA_NLL_LIBDIR);

  struct llama_model_params mp = llama_model_default_params();
  mp.n_gpu_layers = 0;
  ggml_backend_dev_t devs[2] = {cpu, NULL};
  mp.devices = devs;
  struct llama_model* model = llama_model_load_from_file(model_path, mp);
  if (!model) die("cannot load %s", model_path);
  const struct llama_vocab* vocab = llama_model_get_vocab(model);
  const int nv = llama_vocab_n_tokens(vocab);
  for (long i = 0; i < nseq * seq; ++i)
    if (tok[i] >= nv) die("token %d at %ld is outside the model's vocabulary of %d", tok[i], i, nv);

  char desc[256];
  llama_model_desc(model, desc, sizeof desc);
  enum ggml_type tkv = fa ? GGML_TYPE_F16 : GGML_TYPE_F32;
  if (kv) {
    if (!strcmp(kv, "f32")) tkv = GGML_TYPE_F32;
    else if (!strcmp(kv, "f16")) tkv = GGML_TYPE_F16;
    else if (!strcmp(kv, "bf16")) tkv = GGML_TYPE_BF16;
    else die("--kv must be f32, f16 or bf16, got '%s'", kv);
  }

  struct llama_context_params cp = llama_context_default_params();
  cp.n_ctx = (uint32_t)seq;
  cp.n_batch = (uint32_t)seq;
  cp.n_ubatch = (uint32_t)seq;
  cp.n_seq_max = (uint32_t)max_docs;
  cp.n_threads = threads;
  cp.n_threads_batch = threads;
  cp.flash_attn_type = fa ? LLAMA_FLASH_ATTN_TYPE_ENABLED : LLAMA_FLASH_ATTN_TYPE_DISABLED;
  cp.type_k = tkv;
  cp.type_v = tkv;
  cp.kv_unified = true;  // all documents of a row in one buffer of SEQ cells
  cp.no_perf = true;
  cp.offload_kqv = false;
  cp.op_offload = false;
  struct llama_context* ctx = llama_init_from_model(model, cp);
  if (!ctx) die("cannot create a context (n_ctx %ld, %d sequences)", seq, max_docs);
  llama_memory_t mem = llama_get_memory(ctx);

  struct llama_batch b = llama_batch_init((int32_t)seq, 0, 1);
  double* row_nll = calloc((size_t)nseq, sizeof *row_nll);
  long* row_scored = calloc((size_t)nseq, sizeof *row_scored);
  double* pos_nll = malloc((size_t)seq * sizeof *pos_nll);

  // one row: fill the batch, decode (timed), score
  double t_decode = 0, t_nll = 0;
  for (long it = -warmup; it < nseq; ++it) {
    const long r = it < 0 ? 0 : it;
    const long s = r * seq;
    llama_memory_clear(mem, true);
    b.n_tokens = (int32_t)seq;
    int32_t p = 0;
    for (long t = 0; t < seq; ++t) {
      if (t > 0 && doc[s + t] != doc[s + t - 1]) p = 0;
      b.token[t] = tok[s + t];
      b.pos[t] = p++;
      b.n_seq_id[t] = 1;
      b.seq_id[t][0] = (llama_seq_id)(doc[s + t] - doc[s]);
      b.logits[t] = 1;
    }
    const double t0 = now();
    const int rc = llama_decode(ctx, b);
    llama_synchronize(ctx);
    const double t1 = now();
    if (rc != 0) die("llama_decode returned %d on row %ld", rc, r);
    if (it < 0) continue;
    t_decode += t1 - t0;
    long scored = 0;
#pragma omp parallel for num_threads(threads) schedule(static) reduction(+ : scored)
    for (long t = 0; t < seq - 1; ++t) {
      pos_nll[t] = 0;
      if (doc[s + t + 1] != doc[s + t]) continue;
      const float* lg = llama_get_logits_ith(ctx, (int32_t)t);
      double m = lg[0];
      for (int v = 1; v < nv; ++v)
        if (lg[v] > m) m = lg[v];
      double z = 0;
      for (int v = 0; v < nv; ++v) z += exp((double)lg[v] - m);
      pos_nll[t] = m + log(z) - (double)lg[tok[s + t + 1]];
      ++scored;
    }
    double sum = 0;
    for (long t = 0; t < seq - 1; ++t) sum += pos_nll[t];  // in order: independent of the thread count
    t_nll += now() - t1;
    row_nll[r] = sum;
    row_scored[r] = scored;
  }
  double total = 0;
  long scored = 0;
  for (long r = 0; r < nseq; ++r) {
    total += row_nll[r];
    scored += row_scored[r];
  }
  const double tps = (double)scored / t_decode, tps_all = (double)scored / (t_decode + t_nll);
  printf("tokens/s %.1f with-nll %.1f nll_sum %.10g scored %ld rows %ld\n", tps, tps_all, total, scored, nseq);

  if (out_path) {
    FILE* o = fopen(out_path, "w");
    if (!o) die("cannot write %s: %s", out_path, strerror(errno));
    fprintf(o, "{\"schema\": \"omn-audit/llama-nll@1\", \"model\": \"%s\", \"model_desc\": \"%s\", \"tokens\": \"%s\",\n", model_path, desc,
            tok_path);
    fprintf(o, " \"seq_len\": %ld, \"num_seqs\": %ld, \"threads\": %d, \"form\": \"%s\", \"eos\": %ld, \"max_documents_per_row\": %d,\n", seq,
            nseq, threads, form, eos, max_docs);
    fprintf(o, " \"kv_type\": \"%s\", \"kv_type_in_attention\": \"%s\", \"flash_attention\": %s, \"llama_system_info\": \"",
            ggml_type_name(tkv), ggml_type_name(fa && tkv == GGML_TYPE_F32 ? GGML_TYPE_F16 : tkv), fa ? "true" : "false");
    for (const char* c = llama_print_system_info(); *c; ++c)
      if (*c != '"' && *c != '\\' && *c != '\n') fputc(*c, o);
    fprintf(o, "\",\n \"cpu_backend\": {\"device\": \"%s\", \"loaded\": \"", ggml_backend_dev_description(cpu));
    for (const char* c = loaded; *c; ++c)
      if (*c != '"' && *c != '\\' && *c != '\n') fputc(*c, o);
    fprintf(o, "\", \"features\": {");
    ggml_backend_reg_t reg = ggml_backend_dev_backend_reg(cpu);
    ggml_backend_get_features_t gf = (ggml_backend_get_features_t)ggml_backend_reg_get_proc_address(reg, "ggml_backend_get_features");
    if (gf) {
      const char* sep = "";
      for (struct ggml_backend_feature* ft = gf(reg); ft && ft->name; ++ft) {
        fprintf(o, "%s\"%s\": \"%s\"", sep, ft->name, ft->value);
        sep = ", ";
      }
    }
    fprintf(o, "}},\n \"scored_tokens\": %ld, \"nll_sum\": %.17g, \"seconds_decode\": %.6f, \"seconds_nll\": %.6f,\n", scored, total,
            t_decode, t_nll);
    fprintf(o, " \"tokens_per_second\": %.3f, \"tokens_per_second_with_nll\": %.3f,\n \"rows\": [", tps, tps_all);
    for (long r = 0; r < nseq; ++r)
      fprintf(o, "%s{\"offset\": %ld, \"nll_sum\": %.17g, \"scored\": %ld}", r ? ", " : "", r * seq, row_nll[r], row_scored[r]);
    fprintf(o, "]}\n");
    if (fclose(o)) die("cannot write %s", out_path);
  }
  llama_batch_free(b);
  llama_free(ctx);
  llama_model_free(model);
  llama_backend_free();
  return 0;
}
