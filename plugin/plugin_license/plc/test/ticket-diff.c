/*
 * ticket-diff: plc's ticket judge on many tickets at once, for the differential test against the
 * library's (ticket-diff.test.ts), and the maker of the ticket fuzzer's corpus. Test only; the
 * shapes and the mutator are the fuzzer's (fuzz/ticket-shapes.h).
 *
 *   ticket-diff corpus DIR               writes the corpus: every field in every shape, MACs recomputed
 *   ticket-diff mutate SEED COUNT DIR    writes COUNT tickets, the base ticket or a corpus case edited
 *                                        1-4 times by the fuzzer's mutator, MACs recomputed
 *   ticket-diff judge [--project ID] PATH...
 *                                        judges each file (every file of a folder), as the reader of
 *                                        ticket-shapes.h (project ID instead of its own): one JSON line
 *                                        a file, {"file","verdict","reason","problem"}, in name order
 */
#include "../plc.c"
#include "../fuzz/ticket-shapes.h"
#include "../tools/json-out.h"

#include <dirent.h>
#include <stdio.h>

static const char *out_dir;

static int write_file(const char *dir, const char *name, const char *bytes, size_t len) {
  char path[4096];
  FILE *f;
  snprintf(path, sizeof path, "%s/%s", dir, name);
  f = fopen(path, "wb");
  if (f == NULL || fwrite(bytes, 1, len, f) != len || fclose(f) != 0) {
    fprintf(stderr, "ticket-diff: cannot write %s\n", path);
    exit(1);
  }
  return 0;
}

static void emit_file(const char *name, const char *ticket, size_t len, void *ctx) {
  (void)ctx;
  write_file(out_dir, name, ticket, len);
}

/* The corpus in memory, for `mutate` to start from. */
static char corpus_bytes[1200][TS_TICKET_CAP];
static size_t corpus_len[1200];
static size_t corpus_count;

static void emit_memory(const char *name, const char *ticket, size_t len, void *ctx) {
  (void)name, (void)ctx;
  if (corpus_count >= sizeof corpus_len / sizeof corpus_len[0]) return;
  memcpy(corpus_bytes[corpus_count], ticket, len);
  corpus_len[corpus_count++] = len;
}

static int mutate(unsigned long long seed, long count, const char *dir) {
  static char line[TS_LINE_CAP + 1], ticket[TS_TICKET_CAP];
  uint64_t rng = seed * 0x9e3779b97f4a7c15ULL + 1;
  ts_corpus(emit_memory, NULL);
  for (long i = 0; i < count; i++) {
    size_t from = ts_below(&rng, corpus_count + 1), len, edits = 1 + ts_below(&rng, 4), n;
    char name[32];
    if (from == corpus_count) {
      len = sizeof ts_base - 1;
      memcpy(line, ts_base, len);
    } else {
      const char *nl = memchr(corpus_bytes[from], '\n', corpus_len[from]);
      len = (size_t)(nl - corpus_bytes[from]);
      memcpy(line, corpus_bytes[from], len);
    }
    for (size_t e = 0; e < edits; e++) ts_mutate(line, &len, TS_LINE_CAP, &rng, ts_bytes);
    n = ts_sign(line, len, ticket, sizeof ticket);
    snprintf(name, sizeof name, "m%05ld", i);
    if (n > 0) write_file(dir, name, ticket, n);
  }
  return 0;
}

static void judge_file(const char *path, const char *name, const char *project) {
  static char bytes[TS_TICKET_CAP * 2];
  plc_ticket t;
  plc_ticket_verdict v;
  size_t len;
  FILE *f = fopen(path, "rb");
  if (f == NULL) {
    fprintf(stderr, "ticket-diff: cannot read %s\n", path);
    exit(1);
  }
  len = fread(bytes, 1, sizeof bytes, f);
  fclose(f);
  v = plc_ticket_judge(bytes, len, TS_APP, project, TS_NOW, TS_RAW, &t);
  ts_check(v, &t);
  fputs("{\"file\":", stdout);
  print_json_string(name);
  printf(",\"verdict\":\"%s\",\"reason\":", plc_ticket_verdict_name(v));
  if (t.reason == PLC_REASON_NONE) fputs("null", stdout);
  else print_json_string(plc_reason_name(t.reason));
  fputs(",\"problem\":", stdout);
  print_json_string(t.problem);
  puts("}");
}

static int by_name(const void *a, const void *b) { return strcmp(*(const char *const *)a, *(const char *const *)b); }

static void judge_path(const char *path, const char *project) {
  static char names[20000][64];
  static const char *sorted[20000];
  size_t count = 0;
  DIR *d = opendir(path);
  struct dirent *e;
  if (d == NULL) {
    const char *slash = strrchr(path, '/');
    judge_file(path, slash != NULL ? slash + 1 : path, project);
    return;
  }
  while ((e = readdir(d)) != NULL && count < sizeof names / sizeof names[0]) {
    if (e->d_name[0] == '.' || strlen(e->d_name) >= sizeof names[0]) continue;
    memcpy(names[count], e->d_name, strlen(e->d_name) + 1);
    sorted[count] = names[count];
    count++;
  }
  closedir(d);
  qsort(sorted, count, sizeof sorted[0], by_name);
  for (size_t i = 0; i < count; i++) {
    char file[4096];
    snprintf(file, sizeof file, "%s/%s", path, sorted[i]);
    judge_file(file, sorted[i], project);
  }
}

int main(int argc, char **argv) {
  if (argc == 3 && strcmp(argv[1], "corpus") == 0) {
    out_dir = argv[2];
    ts_corpus(emit_file, NULL);
    return 0;
  }
  if (argc == 5 && strcmp(argv[1], "mutate") == 0) return mutate(strtoull(argv[2], NULL, 10), atol(argv[3]), argv[4]);
  if (argc >= 3 && strcmp(argv[1], "judge") == 0) {
    const char *project = TS_PROJECT;
    int i = 2;
    if (argc >= 5 && strcmp(argv[2], "--project") == 0) project = argv[3], i = 4;
    for (; i < argc; i++) judge_path(argv[i], project);
    return 0;
  }
  fputs("usage: ticket-diff corpus DIR | mutate SEED COUNT DIR | judge [--project ID] PATH...\n", stderr);
  return 2;
}
