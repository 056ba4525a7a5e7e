// The pieces of `tlc tune` that need no target: the space from the front
// end and its overrides, the results database (keys, atomic stores,
// concurrent writers, corrupt entries) and the worker scheduler.
#include <doctest/doctest.h>
#include <unistd.h>
#include <sys/wait.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <set>
#include <thread>

#include "compiler/driver/tune_db.h"
#include "compiler/driver/tune_scheduler.h"
#include "compiler/driver/tune_space.h"
#include "compiler/sema/frontend.h"

namespace fs = std::filesystem;
using namespace tlc;
using namespace tlc::driver;

namespace {

fs::path freshDir(const std::string& name) {
  fs::path dir = fs::temp_directory_path() / ("tlc_tune_test_" + std::to_string(::getpid())) / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

const char* kScale = R"(@T.tune(block=[32, 64, 128], unroll=[False, True], where=[block * factor <= 256])
def scale[M, block=64, factor=2, unroll=False, dtype=float32](A: Tensor[(M,), dtype], B: Tensor[(M,), dtype]):
    with T.Kernel(T.ceildiv(M, block)) as bx:
        for i in T.Parallel(block):
            B[bx * block + i] = A[bx * block + i] * factor
)";

// The space compileSource reports for kScale with `defines`.
FrontendTuning spaceOf(const std::vector<Define>& defines, std::vector<std::string> where = {}) {
  SourceManager sources;
  DiagnosticEngine diags(sources);
  uint32_t file = sources.addBuffer("scale.tl", kScale);
  FrontendTuning tuning;
  tuning.extraConditions = std::move(where);
  auto module = compileSource(sources, diags, file, defines, &tuning);
  for (const Diagnostic& d : diags.diagnostics()) INFO(d.message);
  REQUIRE(module);
  return tuning;
}

TuneRecord sampleRecord(const std::string& key, double ms) {
  TuneRecord r;
  r.key = key;
  r.matchKey = "m";
  r.file = "k.tl";
  r.kernel = "scale";
  r.target = "cpu";
  r.device = "test-cpu";
  r.bucket = "M<=1024";
  r.dims = {{"M", 1000}};
  r.tunedAt = "2026-01-01T00:00:00Z";
  r.best.values = {{"block", "64"}};
  r.bestMs = ms;
  r.results = {{r.best, "ok", ms, ""}, {Candidate{{{"block", "32"}}}, "pruned", -1, "where: `x` is false"}};
  return r;
}

}  // namespace

TEST_CASE("the front end reports a declared space and whether its conditions hold") {
  FrontendTuning t = spaceOf({});
  REQUIRE(t.spaces.size() == 1);
  const TuneSpace& s = t.spaces[0];
  CHECK(s.declared);
  REQUIRE(s.params.size() == 2);
  CHECK(s.params[0].name == "block");
  CHECK(s.params[0].values == std::vector<std::string>{"32", "64", "128"});
  CHECK(s.params[1].values == std::vector<std::string>{"False", "True"});
  REQUIRE(s.conditions.size() == 1);
  CHECK(s.conditions[0].text == "block * factor <= 256");
  CHECK(s.allHold());  // 64 * 2
  // The tunable parameters with their values; the dtype is not one.
  CHECK(s.tunable == std::vector<std::pair<std::string, std::string>>{{"block", "64"}, {"factor", "2"}, {"unroll", "False"}});
  // A candidate's bindings decide the condition.
  CHECK_FALSE(spaceOf({{"block", "128"}, {"factor", "4"}}).spaces[0].allHold());
  CHECK(spaceOf({{"block", "128"}}).spaces[0].allHold());
  // A command-line condition joins the declared ones.
  FrontendTuning w = spaceOf({{"block", "128"}}, {"block < 100"});
  REQUIRE(w.spaces[0].conditions.size() == 2);
  CHECK_FALSE(w.spaces[0].conditions[1].holds);
}

TEST_CASE("overrides replace or add parameters and are checked") {
  TuneSpace s = spaceOf({}).spaces[0];
  std::string error;
  auto o = parseSpaceOverride("block=16,32", &error);
  REQUIRE(o);
  auto f = parseSpaceOverride("factor=1,2,3", &error);
  REQUIRE(f);
  auto params = effectiveSpace(s, {*o, *f}, {}, &error);
  REQUIRE(params);
  REQUIRE(params->size() == 3);
  CHECK((*params)[0].values == std::vector<std::string>{"16", "32"});
  CHECK((*params)[2].name == "factor");
  CHECK_FALSE(parseSpaceOverride("block=", &error));
  CHECK_FALSE(parseSpaceOverride("block=1,,2", &error));
  CHECK_FALSE(parseSpaceOverride("block=1,1", &error));
  auto bad = parseSpaceOverride("blok=1", &error);
  REQUIRE(bad);
  CHECK_FALSE(effectiveSpace(s, {*bad}, {}, &error));
  CHECK(error.find("did you mean `block`") != std::string::npos);
  auto notBool = parseSpaceOverride("unroll=1", &error);
  CHECK_FALSE(effectiveSpace(s, {*notBool}, {}, &error));
  CHECK_FALSE(effectiveSpace(s, {}, {"block=64"}, &error));  // tuned and bound by -D
  CHECK(error.find("both tuned and bound") != std::string::npos);
}

TEST_CASE("candidates are the cartesian product, the last parameter fastest") {
  std::vector<TuneParam> params = {{"a", {"1", "2"}, {}}, {"b", {"x", "y", "z"}, {}}};
  std::string error;
  auto c = enumerateCandidates(params, 100, &error);
  REQUIRE(c);
  REQUIRE(c->size() == 6);
  CHECK((*c)[0].label() == "a=1 b=x");
  CHECK((*c)[1].label() == "a=1 b=y");
  CHECK((*c)[5].label() == "a=2 b=z");
  CHECK((*c)[4].defines() == std::vector<std::string>{"a=2", "b=y"});
  std::set<std::string> labels;
  for (const Candidate& x : *c) labels.insert(x.label());
  CHECK(labels.size() == 6);
  CHECK_FALSE(enumerateCandidates(params, 5, &error));
  CHECK(error.find("more than 5") != std::string::npos);
}

TEST_CASE("shape buckets and check sizes") {
  CHECK(shapeBucket({}) == "static");
  CHECK(shapeBucket({{"M", 4096}, {"N", 3000}, {"K", 1}}) == "K<=1,M<=4096,N<=4096");
  CHECK(shapeBucket({{"M", 4097}}) == "M<=8192");
  CHECK(checkSize(100) == 100);
  CHECK(checkSize(256) == 256);
  CHECK(checkSize(4096) == 256);
  CHECK(checkSize(1000) == 256 + 1000 % 256);
  for (int64_t tile : {16, 64, 128, 256})
    for (int64_t size : {512, 1000, 4096, 4160})
      CHECK((size % tile == 0) == (checkSize(size) % tile == 0));
}

TEST_CASE("the key covers every input, and the match key all but device and bucket") {
  TuneKeyInputs in;
  in.sources = {"def k(): pass", "macro m(): pass"};
  in.kernel = "k";
  in.target = "cpu";
  in.options = "cpu=";
  in.defines = {{"dtype", "float16"}};
  in.device = "dev";
  in.bucket = "M<=64";
  in.version = "1";
  TuneKey base = tuneKey(in);
  auto differs = [&](auto change) {
    TuneKeyInputs x = in;
    change(x);
    return tuneKey(x);
  };
  // An imported module's text, a define, the kernel, the target, the options, the version.
  for (TuneKey k : {differs([](TuneKeyInputs& x) { x.sources[1] += " "; }),
                    differs([](TuneKeyInputs& x) { x.defines[0].second = "bfloat16"; }),
                    differs([](TuneKeyInputs& x) { x.kernel = "k2"; }),
                    differs([](TuneKeyInputs& x) { x.target = "cuda:sm_90a"; }),
                    differs([](TuneKeyInputs& x) { x.options = "cpu=znver4"; }),
                    differs([](TuneKeyInputs& x) { x.version = "2"; })}) {
    CHECK(k.key != base.key);
    CHECK(k.matchKey != base.matchKey);
  }
  for (TuneKey k : {differs([](TuneKeyInputs& x) { x.device = "other"; }),
                    differs([](TuneKeyInputs& x) { x.bucket = "M<=128"; })}) {
    CHECK(k.key != base.key);
    CHECK(k.matchKey == base.matchKey);
  }
  CHECK(tuneKey(in).key == base.key);
}

TEST_CASE("records round-trip, and corrupt or misfiled ones are removed and missed") {
  TuneDatabase db(freshDir("db").string());
  TuneRecord r = sampleRecord(std::string(64, 'a'), 0.5);
  std::string error;
  REQUIRE(db.store(r, &error));
  auto back = db.lookup(r.key);
  REQUIRE(back);
  CHECK(back->best.label() == "block=64");
  CHECK(back->results.size() == 2);
  CHECK(back->results[1].status == "pruned");
  CHECK(back->dims.at("M") == 1000);
  CHECK(db.all().size() == 1);
  CHECK(formatRecords(db.all(), true).find("pruned") != std::string::npos);

  SUBCASE("changed bytes") {
    std::string path = db.recordPath(r.key);
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(10);
    f.put('#');
    f.close();
    CHECK_FALSE(db.lookup(r.key));
    CHECK_FALSE(fs::exists(path));  // removed, so the next tune stores it again
    REQUIRE(db.store(r, &error));
    CHECK(db.lookup(r.key));
  }
  SUBCASE("valid bytes that are not a record") {
    KernelCache raw(db.dir());
    REQUIRE(raw.store(r.key, "{\"format\": \"something else\"}", &error));
    CHECK_FALSE(db.lookup(r.key));
    CHECK(db.all().empty());
  }
  SUBCASE("a record filed under another key") {
    KernelCache raw(db.dir());
    REQUIRE(raw.store(std::string(64, 'b'), r.toJson(), &error));
    CHECK_FALSE(db.lookup(std::string(64, 'b')));
  }
}

TEST_CASE("concurrent tuners storing one key leave one valid record") {
  fs::path dir = freshDir("concurrent");
  std::string key(64, 'c');
  std::vector<pid_t> children;
  for (int p = 0; p < 4; ++p) {
    pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      TuneDatabase db(dir.string());
      std::string error;
      bool ok = true;
      for (int i = 0; i < 25; ++i) ok = db.store(sampleRecord(key, p * 100 + i), &error) && ok;
      _exit(ok ? 0 : 1);
    }
    children.push_back(pid);
  }
  // Readers meanwhile see a whole record or none, never a broken one.
  TuneDatabase db(dir.string());
  for (int i = 0; i < 50; ++i)
    if (auto r = db.lookup(key)) CHECK(r->best.label() == "block=64");
  for (pid_t pid : children) {
    int status = 0;
    waitpid(pid, &status, 0);
    CHECK((WIFEXITED(status) && WEXITSTATUS(status) == 0));
  }
  auto r = db.lookup(key);
  REQUIRE(r);
  CHECK(r->bestMs >= 0);
  size_t files = 0;
  for (auto& e : fs::recursive_directory_iterator(dir)) files += e.is_regular_file();
  CHECK(files == 2);  // the record and its checksum; no temporary left behind
}

TEST_CASE("parallelFor runs every index once") {
  std::vector<std::atomic<int>> hits(1000);
  parallelFor(hits.size(), 4, [&](size_t i) { ++hits[i]; });
  for (auto& h : hits) CHECK(h == 1);
  parallelFor(0, 4, [&](size_t) { FAIL("no index"); });
}

TEST_CASE("workers share one queue and each job runs once") {
  for (size_t workers : {1, 2, 3, 8}) {
    JobQueue queue;
    const size_t jobs = 40;
    std::vector<std::atomic<int>> ranBy(jobs);
    for (auto& r : ranBy) r = -1;
    std::vector<std::string> names;
    for (size_t w = 0; w < workers; ++w) names.push_back("cpu" + std::to_string(w));
    // Jobs arrive while the workers run, as compiles finish.
    std::thread producer([&] {
      for (size_t j = 0; j < jobs; ++j) {
        queue.push(j);
        if (j % 7 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
      queue.close();
    });
    std::vector<size_t> unfinished;
    auto reports = runOnWorkers(queue, names, [&](size_t w, size_t j) {
      int expected = -1;
      CHECK(ranBy[j].compare_exchange_strong(expected, int(w)));
      std::this_thread::sleep_for(std::chrono::microseconds(200 * (w + 1)));  // workers of different speeds
      return WorkerOutcome::Done;
    }, &unfinished);
    producer.join();
    CHECK(unfinished.empty());
    size_t total = 0;
    for (const WorkerReport& r : reports) {
      total += r.jobsDone;
      CHECK_FALSE(r.lost);
    }
    CHECK(total == jobs);
    for (auto& r : ranBy) CHECK(r >= 0);
    if (workers > 1) CHECK(reports[0].jobsDone > 0);
  }
}

TEST_CASE("a lost device hands its job to the others") {
  JobQueue queue;
  for (size_t j = 0; j < 20; ++j) queue.push(j);
  queue.close();
  std::vector<std::atomic<int>> done(20);
  std::vector<size_t> unfinished;
  std::atomic<bool> gpu1Called{false};
  auto reports = runOnWorkers(queue, {"gpu0", "gpu1", "gpu2"}, [&](size_t w, size_t j) {
    if (w == 1) {  // gpu1 fails at its first job
      gpu1Called = true;
      return WorkerOutcome::DeviceLost;
    }
    for (int i = 0; i < 5000 && !gpu1Called; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    ++done[j];
    std::this_thread::sleep_for(std::chrono::microseconds(300));
    return WorkerOutcome::Done;
  }, &unfinished);
  CHECK(unfinished.empty());
  CHECK(reports[1].lost);
  CHECK_FALSE(reports[0].lost);
  for (auto& d : done) CHECK(d == 1);
}

TEST_CASE("when every device is lost, the jobs left are reported") {
  JobQueue queue;
  for (size_t j = 0; j < 10; ++j) queue.push(j);
  queue.close();
  std::vector<size_t> unfinished;
  std::atomic<int> done{0};
  auto reports = runOnWorkers(queue, {"gpu0", "gpu1"}, [&](size_t, size_t j) {
    if (j >= 4) return WorkerOutcome::DeviceLost;
    ++done;
    return WorkerOutcome::Done;
  }, &unfinished);
  CHECK(reports[0].lost);
  CHECK(reports[1].lost);
  CHECK(size_t(done) + unfinished.size() == 10);
  for (size_t j : unfinished) CHECK(j >= 4);
  // No workers at all: everything is left.
  JobQueue empty;
  empty.push(1);
  empty.close();
  runOnWorkers(empty, {}, [](size_t, size_t) { return WorkerOutcome::Done; }, &unfinished);
  CHECK(unfinished == std::vector<size_t>{1});
}
